#!/usr/bin/env python3
"""Leave-one-WRITER-out for the quarantine's learned judges: each blind set q3 … q12 is one
writer; hold one out, train on every other writer's set and the non-blind sets, score the one
held out. Blind-q13 is never read here.

Designs (each a logistic regression, classes weighted to balance; its C and threshold chosen
inside the training folds only: C among 0.3, 3, 30 and the threshold in steps of 0.01, by an
inner cross-validation over the nine training writers in three groups of three):
  h      layer (h)'s hashed n-grams (the features the binary computes), gated by a cue as shipped
  e      the MiniLM embedding of the whole text
  he     both concatenated
  e-max  the embedding judge's highest score over the text and each of its clauses
  he-max the same with both feature kinds
  m, hm, m-max, hm-max  the same four with multilingual-e5-small (`embed_e5.py`, emb-m*.jsonl)
                        in place of the English MiniLM (session 13)
The verdict that counts is the rules OR the judge; an entry is scored as score.py does (a split
hostile entry is injected only when no part is held, a harmless one held when any part is).

  eval/quarantine/lowo_prepare.sh /tmp/q12w      # flat sets, clauses, features, embeddings
  /tmp/e5venv/bin/python eval/quarantine/embed_e5.py /tmp/q12w   # for m, hm, m-max, hm-max
  eval/quarantine/lowo.py /tmp/q12w [RULE [DESIGN,…]]

RULE: `sum` (the default, fixed before any fold was scored) takes the C and threshold with the
fewest hostile injected plus harmless held over the inner folds; `budget` takes the fewest
injected whose added holds stay within 2 % of the harmless entries (the rule `quarantine_train`
uses; run afterwards, as a second view). The rules' verdicts are the binary's own (every layer
but h) and cannot be refitted per fold: they were revised on q6 and q8 … q10, so their figures
there are in-sample for every design alike. Results: eval/quarantine/README.md.
"""
import json, os, sys
import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

WORK = sys.argv[1]
RULE = sys.argv[2] if len(sys.argv) > 2 else "sum"
DESIGNS = sys.argv[3].split(",") if len(sys.argv) > 3 else ["h", "e", "he", "e-max", "he-max"]
WRITERS = [f"blind-q{i}" for i in range(3, 13)]
assert "blind-q13" not in WRITERS
# Non-blind sets written by someone who had seen a writer's misses stay out of that writer's fold.
EXCLUDE = {"blind-q3": {"val13", "val14"}, "blind-q12": {"val21"}}
DIMS = 1 << 18
FLOOR = 400
CS = [0.3, 3.0, 30.0]
INNER = 3  # inner folds: the nine training writers in three groups of three
TAUS = np.round(np.arange(0.05, 0.996, 0.01), 2)


def name(p):
    return os.path.basename(p)[:-5]


# Which embeddings the designs read: "emb" MiniLM (e…, he…), "memb" multilingual-e5 (m…, hm…).
KINDS = sorted({"memb" if d.lstrip("h").startswith("m") else "emb"
                for d in DESIGNS if d != "h"})


def load(feat, embs):
    rows = {}
    for l in open(feat):
        r = json.loads(l)
        rows[(name(r["set"]), r["entry"], r["part"])] = r
    for kind, emb in embs.items():
        if kind not in KINDS or not os.path.exists(emb):  # clauses: only -max needs them
            continue
        for l in open(emb):
            r = json.loads(l)
            k = (name(r["set"]), r["entry"], r["part"])
            if k in rows:
                rows[k][kind] = r["emb"]
    return rows


texts = load(f"{WORK}/feat.jsonl", {"emb": f"{WORK}/emb.jsonl", "memb": f"{WORK}/emb-m.jsonl"})
clause_rows = load(f"{WORK}/feat-cl.jsonl",
                   {"emb": f"{WORK}/emb-cl.jsonl", "memb": f"{WORK}/emb-m-cl.jsonl"})
keys = sorted(texts)
assert all(kind in texts[k] for k in keys for kind in KINDS), "every text embedded"
idx = {k: i for i, k in enumerate(keys)}
N = len(keys)
sets = np.array([k[0] for k in keys])
entry_of = [(k[0], k[1]) for k in keys]
y = np.array([texts[k]["hostile"] for k in keys])
parts = np.array([texts[k]["parts"] for k in keys])
rules = np.array([texts[k]["rules"] for k in keys])
shipped = np.array([texts[k]["all"] for k in keys])
cued = np.array([texts[k]["cued"] for k in keys])


def hashed(rs):
    data, ind, ptr = [], [], [0]
    for r in rs:
        f = r["feat"]
        v = 1.0 / np.sqrt(max(len(f), FLOOR))
        ind.extend(f)
        data.extend([v] * len(f))
        ptr.append(len(ind))
    return sp.csr_matrix((np.array(data, np.float32), np.array(ind), np.array(ptr)), shape=(len(rs), DIMS))


def embedded(rs, kind="emb"):
    E = np.array([r.get(kind, [0.0] * 384) for r in rs], np.float32)
    return E / (np.linalg.norm(E, axis=1, keepdims=True) + 1e-9)


H = hashed([texts[k] for k in keys])
E = embedded([texts[k] for k in keys])
M = embedded([texts[k] for k in keys], "memb")
# Clauses: each text's clauses, mapped back to the text they came from.
cl_src = {}
for s in sorted({k[0] for k in keys}):
    for i, c in enumerate(json.load(open(f"{WORK}/clauses/{s}.json"))):
        cl_src[(s, i)] = idx[(s, c["src_entry"], c["src_part"])]
ckeys = sorted(clause_rows)
cowner = np.array([cl_src[(k[0], k[1])] for k in ckeys])
CH = hashed([clause_rows[k] for k in ckeys])
CE = embedded([clause_rows[k] for k in ckeys])
CM = embedded([clause_rows[k] for k in ckeys], "memb")
if any(d.endswith("-max") for d in DESIGNS):
    assert all(kind in clause_rows[k] for k in ckeys for kind in KINDS), "every clause embedded"


def feats(design, which):
    h, e, m = (H, E, M) if which == "text" else (CH, CE, CM)
    if design.startswith("he"):
        return sp.hstack([h, sp.csr_matrix(e)]).tocsr()
    if design.startswith("hm"):
        return sp.hstack([h, sp.csr_matrix(m)]).tocsr()
    if design.startswith("h"):
        return h
    return m if design.startswith("m") else e


# Training samples as quarantine_train: every harmless text, hostile entries of one text.
trainable = (~y) | (parts == 1)


def fit(design, train_mask, C):
    X = feats(design, "text")[train_mask & trainable]
    m = LogisticRegression(C=C, class_weight="balanced", max_iter=2000,
                           solver="liblinear" if design.startswith("h") else "lbfgs")
    m.fit(X, y[train_mask & trainable])
    return m


def score(design, m, test_mask):
    """Each text's score: by its words, or the highest over it and its clauses (`-max`)."""
    s = np.zeros(N)
    s[test_mask] = m.predict_proba(feats(design, "text")[test_mask])[:, 1]
    if design.endswith("-max"):
        cm = test_mask[cowner]
        cs = m.predict_proba(feats(design, "clause")[cm])[:, 1]
        np.maximum.at(s, cowner[cm], cs)
    if design == "h":  # shipped gate: a text with no cue is never held by (h)
        s = np.where(cued, s, 0.0)
    return s


_eid = {e: i for i, e in enumerate(sorted(set(entry_of)))}
eid = np.array([_eid[e] for e in entry_of])
ey = np.zeros(len(_eid), bool)
ey[eid] = y


def tally(mask, held):
    """(hostile injected, hostile, harmless held, harmless) over the entries of `mask`."""
    present = np.zeros(len(ey), bool)
    present[eid[mask]] = True
    h = np.zeros(len(ey), bool)
    np.logical_or.at(h, eid[mask], np.asarray(held, bool)[mask])
    hos, harm = present & ey, present & ~ey
    return int((hos & ~h).sum()), int(hos.sum()), int((harm & h).sum()), int(harm.sum())


def choose(design, train_writers, base_mask):
    """C and threshold by cross-validation over the training writers (in groups)."""
    oos = {C: np.zeros(N) for C in CS}
    inner = np.zeros(N, bool)
    for k in range(INNER):
        test = np.isin(sets, train_writers[k::INNER])
        inner |= test
        for C in CS:
            m = fit(design, base_mask & ~test, C)
            oos[C][test] = score(design, m, test)[test]
    best = None
    for C in CS:
        for tau in TAUS:
            a, nh, b, nn = tally(inner, rules | (oos[C] >= tau))
            if RULE == "sum":
                key = (a + b, b)
            else:  # as (h) shipped: lowest injected with added holds <= 2 % of harmless
                _, _, b0, _ = tally(inner, rules)
                if b - b0 > 0.02 * nn:
                    continue
                key = (a, b)
            if best is None or key < best[0]:
                best = (key, C, tau)
    return best[1], best[2]


results = {}
for design in DESIGNS:
    per = {}
    for w in WRITERS:
        base = (sets != w) & ~np.isin(sets, list(EXCLUDE.get(w, ())))
        others = [v for v in WRITERS if v != w]
        C, tau = choose(design, others, base)
        m = fit(design, base, C)
        test = sets == w
        s = score(design, m, test)
        per[w] = (tally(test, rules | (s >= tau)), tally(test, s >= tau), C, tau)
        print(design, w, per[w], flush=True)
    results[design] = per

base = {w: (tally(sets == w, rules), tally(sets == w, shipped)) for w in WRITERS}
out = {"rule": RULE, "base": base, "designs": results}
json.dump(out, open(f"{WORK}/lowo-{RULE}-{'+'.join(DESIGNS)}.json", "w"), default=str)
print(f"\nthreshold rule: {RULE}")
hdr = "| writer | rules | rules OR (h) shipped | " + " | ".join(f"rules OR {d}" for d in DESIGNS) + " |"
print(hdr)
print("|" + "---|" * (hdr.count("|") - 1))
tot = np.zeros((2 + len(DESIGNS), 4), int)
for w in WRITERS:
    cells = [base[w][0], base[w][1]] + [results[d][w][0] for d in DESIGNS]
    tot += np.array(cells)
    print(f"| {w} | " + " | ".join(f"{c[0]}/{c[1]} inj, {c[2]}/{c[3]} held" for c in cells) + " |")
print("| **sum** | " + " | ".join(f"**{c[0]}/{c[1]} inj, {c[2]}/{c[3]} held**" for c in tot) + " |")
