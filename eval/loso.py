#!/usr/bin/env python3
"""Choose ranking rules honestly: leave one labelled set out, tune on the others, score it.

    cargo build --release --example rank_dump
    for s in ledgerly:eval/learnings-set.json wrenchly:eval/wrenchly/learnings-set.json \\
             fieldline:eval/fieldline/learnings-set.json; do
      target/release/examples/rank_dump MODEL_DIR ${s#*:} > /tmp/${s%%:*}.dump.json; done
    eval/loso.py eval/learnings-set.json:/tmp/ledgerly.dump.json \\
                 eval/wrenchly/learnings-set.json:/tmp/wrenchly.dump.json \\
                 eval/fieldline/learnings-set.json:/tmp/fieldline.dump.json [--lambda 1] [--diagnose]

With hints: a copy of each set whose learnings carry `applies_when` (from eval/hints.json or
eval/wrenchly/hints.json), dumped by rank_dump, and `--when`; every learning then has hints, so
the floor chosen is the floor for hinted learnings (rank.rs HINT_LIFT is its distance from the
floor for bare ones).

Scores each learning as gza does (cosine of the stored embedding with the query's, plus
0.3 × min(BM25 / 12, 1) over the text's terms; tune.py's BM25 is gza's), then tries cut rules
on the scores:

  floor     keep hits ≥ floor and ≥ rel × the best (gza's rule), optionally a clear winner
            (a best ≥ 0.33 leading the second by 0.2) when none passes;
  centred   the same on each score minus the median score of the query's ranking (a query
            that resembles everything, such as a chore naming a file, is judged against its
            own baseline);
  both      floor and centred floor together.

For each set held out, each family's parameters are chosen on the other sets by the mean of
P@3 + mustR@3 + λ × (share of negatives answered with nothing), and the held-out set's figures
are printed: those are the honest ones. `--diagnose` says, per set, where the must-have
learnings are lost (ranked 4th-10th or below, cut by the floor or the relative cut).
The figures that count are score.py's, through the binary; this is for choosing.
Python 3.11 standard library only.
"""
import argparse, json, os, statistics, sys

sys.path.insert(0, os.path.dirname(__file__))
from score import metrics  # noqa: E402
from tune import prepare  # noqa: E402

MAIN = ("floor", 0.3, 0.56, 0.0, 0.85, True)  # gza's constants (rank.rs), for a store of 150


def ranked_scores(keys, rows, qid, lexw):
    r = rows[qid]
    out = [(r["full"][i] + lexw * min(r["lex"][i] / 12.0, 1.0), k) for i, k in enumerate(keys)]
    out.sort(key=lambda x: -x[0])
    return out


def cut(scored, floor, centred_floor, rel, clear):
    xs = [s for s, _ in scored]
    median = xs[len(xs) // 2]
    top = xs[0]
    kept = [k for s, k in scored if s >= floor and s - median >= centred_floor and s >= rel * top][:3]
    if not kept and clear and top >= 0.33 and len(xs) > 1 and top - xs[1] >= 0.2:
        kept = [scored[0][1]]
    return kept


def grid():
    out = []
    for lexw in (0.3, 0.5):
        for rel in (0.8, 0.85, 0.9):
            for clear in (False, True):
                for f in range(30, 70, 2):
                    out.append(("floor", lexw, f / 100, 0.0, rel, clear))
                    out.append(("centred", lexw, 0.0, f / 100, rel, clear))
                    for c in range(40, 66, 4):
                        out.append(("both", lexw, f / 100, c / 100, rel, clear))
    return out


def fmt(m):
    return (f"P@3 {m['P@3']:.2f} mustR@3 {m['mustR@3']:.2f} MRR {m['MRR']:.2f} "
            f"neg {m['neg_empty']}/{m['neg_total']} avg {m['avg_returned']:.2f}")


def diagnose(name, data, keys, rows):
    """Where each positive prompt's must-have learning ends up under gza's rule."""
    buckets = {}
    for q in data["queries"]:
        if not q["relevant"]:
            continue
        scored = ranked_scores(keys, rows, q["id"], 0.3)
        order = [k for _, k in scored]
        at = order.index(q["must"])
        kept = cut(scored, *MAIN[2:])
        top, must = scored[0][0], scored[at][0]
        if q["must"] in kept:
            b = "returned"
        elif at < 3 and must < MAIN[2]:
            b = "top 3, under the floor"
        elif at < 3:
            b = "top 3, cut by the relative cut"
        elif at < 10:
            b = "ranked 4th-10th"
        else:
            b = "ranked below 10th"
        buckets.setdefault(b, []).append(f"{q['id']}@{at + 1}({must:.2f}/{top:.2f})")
    pos = sum(len(v) for v in buckets.values())
    print(f"{name}: {pos} positive prompts; must-have learning (rank, its score / the best's)")
    for b in ("returned", "top 3, under the floor", "top 3, cut by the relative cut",
              "ranked 4th-10th", "ranked below 10th"):
        v = buckets.get(b, [])
        print(f"  {b:<32} {len(v):>3}  {' '.join(v[:12])}{' …' if len(v) > 12 else ''}")
    negs = sorted((ranked_scores(keys, rows, q["id"], 0.3)[0][0] for q in data["queries"] if not q["relevant"]),
                  reverse=True)
    print(f"  negatives' best scores: {' '.join(f'{s:.2f}' for s in negs)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pairs", nargs="+", help="SET.json:DUMP.json, at least two")
    ap.add_argument("--lambda", dest="lam", type=float, default=1.0)
    ap.add_argument("--diagnose", action="store_true")
    ap.add_argument("--when", action="store_true",
                    help="the sets' learnings carry applies_when hints: score the dumps' vectors made with "
                         "them (as gza embeds them) and their terms")
    a = ap.parse_args()
    sets = {}
    for pair in a.pairs:
        path, dump = pair.rsplit(":", 1)
        data = json.load(open(path))
        keys, rows = prepare(data, json.load(open(dump)), a.when)
        sets[path] = (data, keys, rows)
    if a.diagnose:
        for name, (data, keys, rows) in sets.items():
            diagnose(name, data, keys, rows)
        return
    names = list(sets)
    cache = {}

    def scores(name, lexw):
        if (name, lexw) not in cache:
            data, keys, rows = sets[name]
            cache[(name, lexw)] = {q["id"]: ranked_scores(keys, rows, q["id"], lexw) for q in data["queries"]}
        return cache[(name, lexw)]

    results = {}
    for g in grid() + [MAIN]:
        results[g] = {}
        for n in names:
            data = sets[n][0]
            sc = scores(n, g[1])
            results[g][n] = metrics(data, {q["id"]: cut(sc[q["id"]], *g[2:]) for q in data["queries"]})

    def objective(ms):
        return statistics.mean(m["P@3"] + m["mustR@3"] + a.lam * m["neg_empty"] / m["neg_total"] for m in ms)

    print(f"objective: mean of P@3 + mustR@3 + {a.lam} × negatives empty")
    print("gza's constants (floor 0.56, rel 0.85, clear winner):")
    for n in names:
        print(f"  {n}: {fmt(results[MAIN][n])}")
    print(f"  objective over the sets: {objective([results[MAIN][n] for n in names]):.3f}")
    for family in ("floor", "centred", "both"):
        held_out = []
        print(f"{family}:")
        for held in names:
            train = [n for n in names if n != held]
            best = max((g for g in results if g[0] == family),
                       key=lambda g: objective([results[g][n] for n in train]))
            held_out.append(results[best][held])
            print(f"  held out {held}: chose lexw {best[1]} floor {best[2]} centred {best[3]} rel {best[4]} "
                  f"clear {best[5]}; in-sample {objective([results[best][n] for n in train]):.3f}\n"
                  f"    held-out {fmt(results[best][held])}")
        print(f"  held-out objective: {objective(held_out):.3f}")


if __name__ == "__main__":
    main()
