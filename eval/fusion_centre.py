#!/usr/bin/env python3
"""Centred embeddings (each vector minus the mean of the store's learning vectors, renormalised:
MiniLM's anisotropy correction), scored as eval/fusion.py. `eval/fusion_centre.py [loso]`. Findings: eval/README.md (2026-11-28)."""
import sys, json, math, statistics, os
sys.argv_saved = sys.argv[:]; a = sys.argv[1:]; sys.argv = [sys.argv[0]]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fusion as F
from score import metrics
# centred embeddings: subtract the mean of the store's learning vectors from both sides
for n in F.data:
    d, keys, rows = F.data[n]
    dump = json.load(open(os.environ.get("DUMPS", "/tmp") + f"/rel11_{n}.dump.json"))
    L = [l["vec"] for l in dump["learnings"]]; dim = len(L[0])
    mu = [sum(v[j] for v in L)/len(L) for j in range(dim)]
    def c(v):
        w = [x-m for x, m in zip(v, mu)]; s = math.sqrt(sum(x*x for x in w)) or 1
        return [x/s for x in w]
    CL = [c(v) for v in L]
    for q in dump["queries"]:
        cq = c(q["vec"])
        rows[q["id"]]["cen"] = [sum(x*y for x, y in zip(cq, v)) for v in CL]
def scored(n, qid, var, lexw):
    d, keys, rows = F.data[n]; r = rows[qid]
    base = r["cen"] if var.get("cen") else r["full"]
    s = [base[i] + lexw*min(r["lex"][i]/12.0, 1.0) for i in range(len(keys))]
    return sorted(((s[i], keys[i]) for i in range(len(keys))), key=lambda x: -x[0])
F.scored = scored
for var in ({}, {"cen": 1}):
    for lexw in (0.3, 0.5):
        row = []
        for n in F.data:
            d = F.data[n][0]
            nc = metrics(d, {q["id"]: [k for _, k in scored(n, q["id"], var, lexw)[:3]] for q in d["queries"]})
            row.append(f"{n} nocut mustR {nc['mustR@3']:.2f} MRR {nc['MRR']:.2f}")
        print(var, lexw, " | ".join(row), flush=True)
if a and a[0] == "loso":
    def grid():
        for lexw in (0.3, 0.5):
            for rel in (0.8, 0.85, 0.9):
                for clear in (False, True):
                    for f in range(20, 72, 2):
                        yield (lexw, f/100, rel, clear, -9)
    F.grid = grid
    F.MAIN = (0.3, 0.56, 0.85, True, -9)
    F.run({"cen": 1}, 1.0)
