#!/usr/bin/env python3
"""gza's cut plus a floor on the meaning score alone (so a file or module named in a chore does not lift
an unrelated learning over the floor by its words), chosen leave-one-set-out with λ 1 and 2. Findings: eval/README.md (2026-11-28)."""
import sys, statistics
a = sys.argv[1:]; sys.argv = [sys.argv[0]]
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
import fusion as F
from score import metrics
data = F.data
def ranked(n, qid, lexw):
    d, keys, rows = data[n]; r = rows[qid]
    s = [(r["full"][i] + lexw*min(r["lex"][i]/12.0, 1.0), r["full"][i], keys[i]) for i in range(len(keys))]
    return sorted(s, key=lambda x: -x[0])
def cut(sc, floor, rel, semfloor, mix):
    # floor/rel on the blend (gza's), plus each kept hit's meaning alone ≥ semfloor
    top = sc[0][0]
    kept = [k for b, c, k in sc if b >= floor and b >= rel*top and c >= semfloor][:3]
    if not kept and mix and top >= 0.33 and top - sc[1][0] >= 0.2 and sc[0][1] >= semfloor:
        kept = [sc[0][2]]
    return kept
G = [(lw, f/100, rel, s/100, cl) for lw in (0.3, 0.5) for rel in (0.85,) for cl in (True, False)
     for f in range(44, 72, 2) for s in [0] + list(range(30, 62, 2))]
MAIN = (0.3, 0.56, 0.85, 0.0, True)
G.append(MAIN)
cache = {(n, lw): {q["id"]: ranked(n, q["id"], lw) for q in data[n][0]["queries"]} for n in data for lw in (0.3, 0.5)}
res = {g: {n: metrics(data[n][0], {q["id"]: cut(cache[(n, g[0])][q["id"]], *g[1:]) for q in data[n][0]["queries"]}) for n in data} for g in G}
for lam in (1.0, 2.0):
    obj = lambda ms: statistics.mean(m["P@3"]+m["mustR@3"]+lam*m["neg_empty"]/m["neg_total"] for m in ms)
    ho = []
    for held in data:
        tr = [n for n in data if n != held]
        best = max(G, key=lambda g: obj([res[g][n] for n in tr]))
        m = res[best][held]; ho.append(m)
        print(f"lam {lam} held {held}: {best} -> P@3 {m['P@3']:.2f} mustR {m['mustR@3']:.2f} neg {m['neg_empty']}/{m['neg_total']}")
    print(f"lam {lam} held-out objective {obj(ho):.3f}; main {obj([res[MAIN][n] for n in data]):.3f}")
