#!/usr/bin/env python3
"""Try ranking rules offline on a labelled set, from what the ranker sees of it.

    cargo run --release --example rank_dump -- MODEL_DIR eval/learnings-set.json > /tmp/ledgerly.json
    eval/tune.py eval/learnings-set.json /tmp/ledgerly.json [--rule NAME] [--misses]

The dump (examples/rank_dump.rs) holds every learning's terms and embedding and every prompt's
terms and embeddings (whole, and each sentence) as gza computes them; this script scores them
with gza's BM25 and the rules below, and prints the same metrics as score.py. It is for choosing
rules and constants; the figures that count are score.py's, through the binary.
Python 3.11 standard library only.
"""
import json, math, sys, argparse

sys.path.insert(0, __import__("os").path.dirname(__file__))
from score import metrics  # noqa: E402


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def bm25(docs, q, k1=1.2, b=0.75):
    n = len(docs)
    avg = max(sum(len(d) for d in docs) / max(n, 1), 1.0)
    df = {t: sum(1 for d in docs if t in d) for t in q}
    out = []
    for d in docs:
        s = 0.0
        for t in q:
            f = d.count(t)
            if not f:
                continue
            idf = math.log((n - df[t] + 0.5) / (df[t] + 0.5) + 1.0)
            s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(d) / avg))
        out.append(s)
    return out


def distinct(terms):
    seen, out = set(), []
    for t in terms:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


def prepare(data, dump, when=False):
    keys = [l["key"] for l in dump["learnings"]]
    docs = [l["terms"] + (l.get("when_terms", []) if when else []) for l in dump["learnings"]]
    vecs = [(l["vec_when"] if when and l.get("vec_when") else l["vec"]) for l in dump["learnings"]]
    rows = {}
    for q in dump["queries"]:
        full = [dot(q["vec"], v) for v in vecs]
        sent = [[dot(s, v) for v in vecs] for s in q["sentence_vecs"]]
        lex = bm25(docs, distinct(q["terms"]))
        rows[q["id"]] = {"full": full, "sent": sent, "lex": lex}
    return keys, rows


def stats(xs):
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))
    return m, sd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("set")
    ap.add_argument("dump")
    ap.add_argument("--when", action="store_true", help="use the learnings' applies_when hints")
    ap.add_argument("--misses", action="store_true")
    a = ap.parse_args()
    data = json.load(open(a.set))
    dump = json.load(open(a.dump))
    keys, rows = prepare(data, dump, a.when)
    n = len(keys)

    def rank(qid, lexw=0.3, scale=12.0, sent_w=0.0):
        r = rows[qid]
        out = []
        for i in range(n):
            sem = r["full"][i]
            if sent_w and r["sent"]:
                sem = (1 - sent_w) * sem + sent_w * max(s[i] for s in r["sent"])
            out.append((sem + lexw * min(r["lex"][i] / scale, 1.0), keys[i]))
        out.sort(key=lambda x: -x[0])
        return out

    def main_rule(scored, floor=0.56, rel=0.85):
        top = scored[0][0]
        second = scored[1][0]
        if 0.33 <= top < floor and top - second >= 0.2:
            return [scored[0][1]]
        return [k for s, k in scored if s >= floor and s >= rel * top][:3]

    def z_rule(scored, zmin, floor, rel, absmin=None):
        xs = [s for s, _ in scored]
        m, sd = stats(xs)
        top = xs[0]
        if (top - m) / sd < zmin or top < floor:
            return []
        keep = [k for s, k in scored if s >= rel * top and (s - m) / sd >= zmin * 0.8][:3]
        return keep

    def run(fn, **kw):
        ranked = {q["id"]: fn(rank(q["id"], **{k: v for k, v in kw.items() if k in ("lexw", "scale", "sent_w")}))
                  for q in data["queries"]}
        return ranked

    def show(name, ranked):
        m = metrics(data, ranked)
        print(f"{name:<50} P@3 {m['P@3']:.2f} mustR {m['mustR@3']:.2f} MRR {m['MRR']:.2f} "
              f"neg {m['neg_empty']}/{m['neg_total']} avg {m['avg_returned']:.2f}")
        return m

    show("main rule", run(main_rule))
    show("top3 no cut", run(lambda s: [k for _, k in s[:3]]))
    for sw in (0.0, 0.3, 0.5):
        show(f"top3 no cut sent_w {sw}", run(lambda s: [k for _, k in s[:3]], sent_w=sw))
    # Where the positives' must items and the negatives' tops sit, relative to each query's spread.
    for sw in (0.0, 0.5):
        pos_z, neg_z = [], []
        for q in data["queries"]:
            sc = rank(q["id"], sent_w=sw)
            xs = [s for s, _ in sc]
            m, sd = stats(xs)
            if q["relevant"]:
                mk = [s for s, k in sc if k == q["must"]][0]
                pos_z.append(((mk - m) / sd, mk))
            else:
                neg_z.append(((xs[0] - m) / sd, xs[0]))
        pos_z.sort()
        neg_z.sort()
        print(f"sent_w {sw}: negatives' top z:", " ".join(f"{z:.1f}/{s:.2f}" for z, s in neg_z))
        print("   must z (lowest 20):", " ".join(f"{z:.1f}/{s:.2f}" for z, s in pos_z[:20]))


if __name__ == "__main__":
    main()
