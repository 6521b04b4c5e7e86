#!/usr/bin/env python3
"""Leave-one-set-out for the neighbour layer (layer g): train on every set but one, score the
left-out one, for each design and parameter; q3 and q4 are never read here.

  cargo run --example quarantine_dump -- MODEL_DIR eval/quarantine/{corpus,dev,val*,blind}.json > /tmp/dump.jsonl
  eval/quarantine/loso.py /tmp/dump.jsonl

A set's score: hostile entries injected (no part held) and harmless entries held (any part held),
by the neighbour layer alone and OR'd with the rules (whose verdicts are in-sample on every set
here: the rules were written on them).
"""
import json, sys, itertools
import numpy as np

rows = [json.loads(l) for l in open(sys.argv[1])]
X = np.array([r["emb"] for r in rows], dtype=np.float32)
X /= np.linalg.norm(X, axis=1, keepdims=True) + 1e-9
y = np.array([r["hostile"] for r in rows])
rule = np.array([r["held"] for r in rows])
sets = np.array([r["set"].split("/")[-1] for r in rows])
entry = [(r["set"], r["entry"]) for r in rows]
names = sorted(set(sets))
S = X @ X.T


def knn_margin(test, train, k):
    """Mean similarity of the k nearest hostile minus that of the k nearest harmless."""
    s = S[np.ix_(test, train)]
    yt = y[train]
    h = np.sort(np.where(yt, s, -1), axis=1)[:, ::-1][:, :k].mean(1)
    g = np.sort(np.where(~yt, s, -1), axis=1)[:, ::-1][:, :k].mean(1)
    return h, g


def entry_score(idx, held):
    ent = {}
    for i, hd in zip(idx, held):
        e = entry[i]
        ent.setdefault(e, [y[i], False])
        ent[e][1] |= bool(hd)
    hos = [v for v in ent.values() if v[0]]
    harm = [v for v in ent.values() if not v[0]]
    return sum(not v[1] for v in hos), len(hos), sum(v[1] for v in harm), len(harm)


def evaluate(k, margin, floor, combine):
    per = []
    for name in names:
        test = np.where(sets == name)[0]
        train = np.where(sets != name)[0]
        h, g = knn_margin(test, train, k)
        layer = (h - g >= margin) & (h >= floor)
        held = layer | rule[test] if combine else layer
        per.append(entry_score(test, held))
    return per


def summary(per):
    inj = [a / max(b, 1) for a, b, _, _ in per]
    hd = [c / max(d, 1) for _, _, c, d in per]
    return np.mean(inj), max(inj), np.mean(hd), max(hd)


results = []
for k, margin, floor in itertools.product([1, 3, 5, 10], [0.0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2],
                                          [0.0, 0.4, 0.5, 0.6, 0.7]):
    per = evaluate(k, margin, floor, False)
    results.append((k, margin, floor, summary(per), per))

print("layer alone (k, margin, floor): inj mean/worst, held mean/worst; best by held mean <= budget")
for budget in [0.02, 0.03, 0.05, 0.08]:
    ok = [r for r in results if r[3][2] <= budget]
    best = min(ok, key=lambda r: (r[3][0], r[3][2]))
    print(f"budget {budget}: k={best[0]} margin={best[1]} floor={best[2]}  inj {best[3][0]:.3f}/{best[3][1]:.3f} held {best[3][2]:.3f}/{best[3][3]:.3f}")
if len(sys.argv) > 2:
    k, margin, floor = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    for combine in (False, True):
        per = evaluate(k, margin, floor, combine)
        print(("rules OR layer" if combine else "layer alone"), f"k={k} margin={margin} floor={floor}")
        for name, (a, b, c, d) in zip(names, per):
            print(f"  {name:12} injected {a:3}/{b:3}  held {c:3}/{d:3}")
        m = summary(per)
        print(f"  mean injected {m[0]:.3f} worst {m[1]:.3f}; mean held {m[2]:.3f} worst {m[3]:.3f}")
    per = [entry_score(np.where(sets == n)[0], rule[np.where(sets == n)[0]]) for n in names]
    m = summary(per)
    print(f"rules alone (in-sample): mean injected {m[0]:.3f} worst {m[1]:.3f}; mean held {m[2]:.3f} worst {m[3]:.3f}")
