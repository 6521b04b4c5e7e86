#!/usr/bin/env python3
"""Score variants beside gza's, leave-one-set-out (session 11, issue 20's "better relevance").

    for s in ledgerly:eval/learnings-set.json wrenchly:eval/wrenchly/learnings-set.json \\
             fieldline:eval/fieldline/learnings-set.json; do
      target/debug/examples/rank_dump MODEL_DIR ${s#*:} > /tmp/rel11_${s%%:*}.dump.json; done
    eval/fusion.py --ceiling                        # fast: no-cut mustR@3 and gza's cut, per variant
    eval/fusion.py '[{}, {"stem": 1}]' [LAMBDA]     # slow (about 3 min a variant): loso choice

Variants of the score: `stem` (BM25 over crudely suffix-stemmed terms), `rrf` (order by
reciprocal-rank fusion of the cosine ranking and the BM25 ranking, k = 60, then cut on gza's
blended score). The cut grid adds to gza's floor / relative cut / clear winner a z-score
condition (a hit's score minus the mean of the query's scores, over their spread, at least z),
a relative, size-aware rule meant to leave unrelated prompts empty. Parameters are chosen on two
sets by P@3 + mustR@3 + λ × negatives empty and the third is scored. Findings: eval/README.md.
Python 3.11 standard library only.
"""
import json, sys, os, statistics, math, re
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "eval"))
from score import metrics
from tune import prepare, bm25, distinct
SETS = [("ledgerly","eval/learnings-set.json"),("wrenchly","eval/wrenchly/learnings-set.json"),("fieldline","eval/fieldline/learnings-set.json")]
def stem(t):
    for suf in ("ations","ation","ings","ing","ers","er","ied","ies","es","ed","s","ly"):
        if len(t) > len(suf)+3 and t.endswith(suf):
            return t[:-len(suf)]
    return t
data = {}
for n, p in SETS:
    d = json.load(open(os.path.join(ROOT, p))); dump = json.load(open(os.environ.get("DUMPS", "/tmp") + f"/rel11_{n}.dump.json"))
    keys, rows = prepare(d, dump)
    docs = [[stem(t) for t in l["terms"]] for l in dump["learnings"]]
    for q in dump["queries"]:
        rows[q["id"]]["lexs"] = bm25(docs, distinct([stem(t) for t in q["terms"]]))
    data[n] = (d, keys, rows)

def scored(n, qid, var, lexw):
    d, keys, rows = data[n]; r = rows[qid]
    lex = r["lexs"] if var.get("stem") else r["lex"]
    s = [r["full"][i] + lexw*min(lex[i]/12.0,1.0) for i in range(len(keys))]
    if var.get("rrf"):
        oc = sorted(range(len(keys)), key=lambda i:-r["full"][i]); ol = sorted(range(len(keys)), key=lambda i:-lex[i])
        rc = {i:k for k,i in enumerate(oc)}; rl = {i:k for k,i in enumerate(ol)}
        rr = [1/(60+rc[i]) + (1/(60+rl[i]) if lex[i]>0 else 0) for i in range(len(keys))]
        order = sorted(range(len(keys)), key=lambda i:-rr[i])
        return [(s[i], keys[i]) for i in order]
    out = sorted(((s[i], keys[i]) for i in range(len(keys))), key=lambda x:-x[0])
    return out

def cut(sc, floor, rel, clear, z):
    xs = [s for s,_ in sc]; m = statistics.mean(xs); sd = statistics.pstdev(xs) or 1
    top = max(xs)
    kept = [k for s,k in sc if s >= floor and s >= rel*top and (s-m)/sd >= z][:3]
    if not kept and clear and top >= 0.33 and top - sorted(xs)[-2] >= 0.2:
        kept = [sc[0][1]]
    return kept

def grid():
    for lexw in (0.3, 0.5):
        for rel in (0.8,0.85,0.9):
            for clear in (False, True):
                for f in range(40, 72, 2):
                    for z in (-9, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5):
                        yield (lexw, f/100, rel, clear, z)
MAIN = (0.3, 0.56, 0.85, True, -9)
def run(var, lam=1.0):
    res = {}
    for g in list(grid()):
        res[g] = {}
        for n in data:
            d = data[n][0]
            res[g][n] = metrics(d, {q["id"]: cut(scored(n,q["id"],var,g[0]), *g[1:]) for q in d["queries"]})
    obj = lambda ms: statistics.mean(m["P@3"]+m["mustR@3"]+lam*m["neg_empty"]/m["neg_total"] for m in ms)
    ho = []
    for held in data:
        tr = [n for n in data if n != held]
        best = max(res, key=lambda g: obj([res[g][n] for n in tr]))
        m = res[best][held]; ho.append(m)
        print(f"  {var} held {held}: {best} -> P@3 {m['P@3']:.2f} mustR {m['mustR@3']:.2f} neg {m['neg_empty']}/{m['neg_total']}")
    print(f"  {var} held-out objective {obj(ho):.3f}; main-constants {obj([res[MAIN][n] for n in data]):.3f}", flush=True)
    return res

def ceiling():
    """No-cut mustR@3 (the best three) and gza's cut, per variant and lexical weight."""
    for var in ({}, {"stem": 1}, {"rrf": 1}, {"rrf": 1, "stem": 1}):
        for lexw in (0.3, 0.5):
            row = []
            for n in data:
                d = data[n][0]
                nc = metrics(d, {q["id"]: [k for _, k in scored(n, q["id"], var, lexw)[:3]] for q in d["queries"]})
                mc = metrics(d, {q["id"]: cut(scored(n, q["id"], var, lexw), *MAIN[1:]) for q in d["queries"]})
                row.append(f"{n} nocut mustR {nc['mustR@3']:.2f} | cut P {mc['P@3']:.2f} "
                           f"mR {mc['mustR@3']:.2f} neg {mc['neg_empty']}/{mc['neg_total']}")
            print(var, lexw, " || ".join(row), flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--ceiling"]:
        ceiling()
        sys.exit()
    for var in json.loads(sys.argv[1]):
        run(var, float(sys.argv[2]) if len(sys.argv)>2 else 1.0)
