#!/usr/bin/env python3
"""Score learning rankers on eval/learnings-set.json (Python standard library only).

  eval/score.py --gza target/release/gza        # gza beside the keyword and BM25 baselines
  eval/score.py                                 # baselines only
  eval/score.py --gza … --misses                # what gza missed, and negatives it answered
  eval/score.py --gza … --sweep                 # tune: floor × relative cut × lexical weight
  eval/score.py --gza … --hints eval/wrenchly/hints.json   # the learnings with "applies when" hints

gza is driven exactly as users drive it: in a fresh project, `gza learnings add --section S
TEXT` once per learning (with `--when HINT` for each of its hints: a learning's `applies_when`
in the set, or its key's entry in --hints), then `gza learnings search --json TEXT` per prompt.

Metrics (positive prompts are those with relevant learnings; the top 3 returned count):
  P@3      relevant among those returned ÷ number returned; a positive prompt answered with
           nothing counts 0. P@3/3 divides by 3 always.
  mustR@3  share of positive prompts whose must-have learning is returned.
  MRR      mean of 1 / rank of the first relevant learning returned (0 if none).
  neg      negative prompts answered with nothing, "k of N".
  avg      mean number returned per positive prompt.
"""
import argparse, json, math, os, pathlib, re, shutil, statistics, subprocess, sys, tempfile, time

HERE = pathlib.Path(__file__).parent
STOP = set("a an and are as at be by for from has have in into is it its of on or that the this to "
           "was were will with when what which who why how our we you your not no do does".split())


def load(path=None):
    return json.loads(pathlib.Path(path or HERE / "learnings-set.json").read_text())


def metrics(data, ranked):
    """ranked: prompt id -> list of learning keys, best first (already cut)."""
    pos = [q for q in data["queries"] if q["relevant"]]
    neg = [q for q in data["queries"] if not q["relevant"]]
    p3, p33, must, mrr, returned = [], [], [], [], []
    for q in pos:
        top = ranked[q["id"]][:3]
        rel = [k for k in top if k in q["relevant"]]
        p3.append(len(rel) / len(top) if top else 0.0)
        p33.append(len(rel) / 3)
        must.append(1.0 if q["must"] in top else 0.0)
        first = next((i for i, k in enumerate(ranked[q["id"]]) if k in q["relevant"]), None)
        mrr.append(1 / (first + 1) if first is not None else 0.0)
        returned.append(len(top))
    empty = sum(1 for q in neg if not ranked[q["id"]])
    return {"P@3": statistics.mean(p3), "P@3/3": statistics.mean(p33), "mustR@3": statistics.mean(must),
            "MRR": statistics.mean(mrr), "neg_empty": empty, "neg_total": len(neg),
            "avg_returned": statistics.mean(returned)}


def words(text):
    return {w.strip(".,!?") for w in text.lower().split() if len(w) > 3}


def keyword_baseline(data):
    """Seed 000's formula: |overlap| / min(|task|, |learning|), top 3 with a score > 0."""
    out = {}
    for q in data["queries"]:
        tk = words(q["prompt"])
        scored = []
        for l in data["learnings"]:
            lk = words(l["text"])
            if tk and lk:
                s = len(tk & lk) / min(len(tk), len(lk))
                if s > 0:
                    scored.append((s, l["key"]))
        scored.sort(key=lambda x: -x[0])
        out[q["id"]] = [k for _, k in scored[:3]]
    return out


def tokens(text):
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOP]


def bm25_scores(data, k1=1.2, b=0.75):
    docs = [tokens(l["text"]) for l in data["learnings"]]
    n = len(docs)
    avg = sum(map(len, docs)) / n
    df = {}
    for d in docs:
        for t in set(d):
            df[t] = df.get(t, 0) + 1
    out = {}
    for q in data["queries"]:
        qt = set(tokens(q["prompt"]))
        scores = []
        for l, d in zip(data["learnings"], docs):
            s = 0.0
            for t in qt:
                f = d.count(t)
                if f:
                    idf = math.log((n - df[t] + 0.5) / (df[t] + 0.5) + 1)
                    s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(d) / avg))
            if s > 0:
                scores.append((s, l["key"]))
        scores.sort(key=lambda x: -x[0])
        out[q["id"]] = scores
    return out


def bm25_baseline(data):
    """BM25 with the lowest threshold that leaves at least 75 % of negatives empty."""
    scores = bm25_scores(data)
    neg = [q["id"] for q in data["queries"] if not q["relevant"]]
    need = math.ceil(0.75 * len(neg))
    tops = sorted((scores[i][0][0] if scores[i] else 0.0) for i in neg)
    threshold = tops[need - 1] + 1e-9 if need else 0.0
    threshold = max(threshold, 1e-9)
    ranked = {qid: [k for s, k in sc if s >= threshold][:3] for qid, sc in scores.items()}
    return ranked, threshold


def run(gza, args, cwd, env):
    r = subprocess.run([gza, *args], cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"gza {' '.join(args[:3])} … failed ({r.returncode}):\n{r.stderr}")
    return r


def gza_project(gza, data):
    """A fresh project holding every learning; returns (dir, env, id -> key)."""
    tmp = tempfile.mkdtemp(prefix="gza-eval-")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "GZA_MODEL_DIR", "XDG_DATA_HOME", "XDG_CACHE_HOME")}
    env["NO_COLOR"] = "1"
    subprocess.run(["git", "init", "-q"], cwd=tmp, check=True)
    run(gza, ["init"], tmp, env)
    ids = {}
    for l in data["learnings"]:
        when = [a for h in l.get("applies_when", []) for a in ("--when", h)]
        out = run(gza, ["learnings", "add", "--section", l["section"], *when, "--", l["text"]], tmp, env).stdout
        m = re.search(r"\bL(\d+)\b", out)
        if not m:
            sys.exit(f"no id in gza's answer to add: {out!r}")
        ids["L" + m.group(1)] = l["key"]
    return tmp, env, ids


def gza_ranked(gza, data, raw=False):
    tmp, env, ids = gza_project(gza, data)
    ranked, hits, times = {}, {}, []
    for q in data["queries"]:
        args = ["learnings", "search", "--json"] + (["--raw", "-k", "20"] if raw else []) + ["--", q["prompt"]]
        t = time.perf_counter()
        r = run(gza, args, tmp, env)
        times.append(time.perf_counter() - t)
        found = json.loads(r.stdout)
        hits[q["id"]] = [dict(h, key=ids[h["id"]]) for h in found]
        ranked[q["id"]] = [ids[h["id"]] for h in found]
    shutil.rmtree(tmp, ignore_errors=True)
    return ranked, hits, times


def cut(hits, floor, rel, weight, low=None, margin=None):
    """Re-rank raw hits with a lexical weight, then keep those above the floor and the relative
    cut; with `low` and `margin`, also a clear winner: a top item above `low` that leads the
    second by `margin`."""
    out = {}
    for qid, hs in hits.items():
        scored = sorted(((h["semantic"] + weight * h["lexical"], h["key"]) for h in hs), key=lambda x: -x[0])
        top = scored[0][0] if scored else 0
        kept = [k for s, k in scored if s >= floor and s >= rel * top][:3]
        if not kept and low is not None and scored and top >= low:
            second = scored[1][0] if len(scored) > 1 else 0
            if top - second >= margin:
                kept = [scored[0][1]]
        out[qid] = kept
    return out


def table(rows):
    print(f"{'ranker':<10} {'P@3':>6} {'P@3/3':>6} {'mustR@3':>8} {'MRR':>6} {'neg empty':>10} {'avg':>5}")
    for name, m in rows:
        print(f"{name:<10} {m['P@3']:6.2f} {m['P@3/3']:6.2f} {m['mustR@3']:8.2f} {m['MRR']:6.2f} "
              f"{m['neg_empty']:>4} of {m['neg_total']:<3} {m['avg_returned']:5.2f}")


def check(data):
    keys = [l["key"] for l in data["learnings"]]
    texts = [l["text"] for l in data["learnings"]]
    assert len(set(keys)) == len(keys) and len(set(texts)) == len(texts), "duplicate keys or texts"
    assert all(len(t.split()) <= 20 for t in texts), "a learning over 20 words"
    for q in data["queries"]:
        assert all(r in keys for r in q["relevant"]), q["id"]
        assert (q["must"] is None) == (not q["relevant"]) and (q["must"] is None or q["must"] in q["relevant"]), q["id"]
    neg = sum(1 for q in data["queries"] if not q["relevant"])
    assert len(keys) >= 100 and len(data["queries"]) >= 40 and neg >= 10
    print(f"ok: {len(keys)} learnings, {len(data['queries'])} prompts, {neg} negatives")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gza", help="path to the gza binary")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--misses", action="store_true")
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--set", help="another labelled set of the same format (e.g. eval/wrenchly/learnings-set.json)")
    ap.add_argument("--hints", help="a JSON map of learning key -> applies_when hints, added with --when")
    a = ap.parse_args()
    if a.gza:
        a.gza = str(pathlib.Path(a.gza).resolve())
    data = load(a.set)
    if a.hints:
        hints = json.loads(pathlib.Path(a.hints).read_text())
        unknown = set(hints) - {l["key"] for l in data["learnings"]}
        if unknown:
            sys.exit(f"--hints names learnings the set lacks: {sorted(unknown)[:5]}")
        for l in data["learnings"]:
            l["applies_when"] = hints.get(l["key"], [])
    if a.check:
        check(data)
        return
    rows = [("keyword", metrics(data, keyword_baseline(data)))]
    bm, threshold = bm25_baseline(data)
    rows.append(("bm25", metrics(data, bm)))
    if a.gza and a.sweep:
        _, hits, _ = gza_ranked(a.gza, data, raw=True)
        results = []
        for weight in (0.0, 0.1, 0.2, 0.3, 0.5):
            for floor in [x / 100 for x in range(20, 62, 2)]:
                for rel in (0.0, 0.8, 0.85, 0.9):
                    for low, margin in [(None, None)] + [(lo, mg) for lo in (0.3, 0.33, 0.36) for mg in (0.1, 0.15, 0.2)]:
                        m = metrics(data, cut(hits, floor, rel, weight, low, margin))
                        results.append((weight, floor, rel, low, margin, m))
        ok = [r for r in results if r[-1]["neg_empty"] >= math.ceil(0.75 * r[-1]["neg_total"])]
        ok.sort(key=lambda r: -(r[-1]["P@3"] + r[-1]["mustR@3"]))
        for w, f, r, lo, mg, m in ok[:25]:
            print(f"weight {w:.1f} floor {f:.2f} rel {r:.2f} low {lo} margin {mg}: P@3 {m['P@3']:.2f} "
                  f"mustR@3 {m['mustR@3']:.2f} MRR {m['MRR']:.2f} neg {m['neg_empty']}/{m['neg_total']}")
        return
    times = []
    if a.gza:
        ranked, hits, times = gza_ranked(a.gza, data)
        rows.append(("gza", metrics(data, ranked)))
    if a.json:
        print(json.dumps({name: m for name, m in rows} | {"bm25_threshold": threshold}, indent=1))
    else:
        table(rows)
        print(f"(bm25 threshold {threshold:.3f}, tuned on this set as the research did)")
        if times:
            times.sort()
            print(f"gza search: median {statistics.median(times) * 1e3:.0f} ms, "
                  f"p95 {times[int(0.95 * (len(times) - 1))] * 1e3:.0f} ms per call (whole process)")
    if a.misses and a.gza:
        text = {l["key"]: l["text"] for l in data["learnings"]}
        for q in data["queries"]:
            got = ranked[q["id"]]
            if q["relevant"] and q["must"] not in got[:3]:
                print(f"\nMISS {q['id']}: {q['prompt']}\n  must: {text[q['must']]}")
                for k in got[:3]:
                    print(f"  got:  {text[k]}")
            elif not q["relevant"] and got:
                print(f"\nNOISE {q['id']}: {q['prompt']}")
                for k in got[:3]:
                    print(f"  got:  {text[k]}")


if __name__ == "__main__":
    main()
