#!/bin/sh
# Prepare the inputs of eval/quarantine/lowo.py in DIR: every labelled set but blind-q13 in one
# flat form (canon/), each text's clauses (clauses/), and for both the features of layer (h)
# with the rules' verdicts (feat*.jsonl, the `quarantine_features` example) and the MiniLM
# embeddings (emb*.jsonl, the `quarantine_dump` example, release build recommended).
#
#   eval/quarantine/lowo_prepare.sh DIR [QUARANTINE_DUMP_BINARY]
# val15 … val20 are q6 … q11 flattened (the same texts): they are left out, the blind sets stand
# for them. blind-q13 is never read.
set -eu
cd "$(dirname "$0")/../.."
dir=$1
dump=${2:-target/release/examples/quarantine_dump}
model=${GZA_MODEL_DIR:-$HOME/.local/share/gza/models/all-MiniLM-L6-v2}
mkdir -p "$dir/sets" "$dir/canon" "$dir/clauses"
for s in blind blind-q3 blind-q4 blind-q5 blind-q6 blind-q7 blind-q8 blind-q9 blind-q10 blind-q11 blind-q12; do
    python3 eval/quarantine/flatten_blind.py "eval/quarantine/$s.json" > "$dir/sets/$s.json"
done
python3 eval/quarantine/from_tests.py > "$dir/sets/tests-it.json"
for s in corpus dev val val2 val3 val4 val5 val6 val7 val8 val9 val10 val11 val12 val13 val14 val21; do
    cp "eval/quarantine/$s.json" "$dir/sets/"
done
python3 - "$dir" <<'PY'
import glob, json, os, re, sys
d = sys.argv[1]
for n in ["learnings-set", "wrenchly/learnings-set", "fieldline/learnings-set"]:
    s = json.load(open(f"eval/{n}.json"))
    json.dump([{"text": l["text"], "hostile": False} for l in s["learnings"]],
              open(f"{d}/sets/ordinary-{n.split('/')[0]}.json", "w"), ensure_ascii=False)
# One form for every set: {"text"} or {"texts"}, and "hostile".
for p in sorted(glob.glob(f"{d}/sets/*.json")):
    data = json.load(open(p))
    data = data["items"] if isinstance(data, dict) else data
    out = []
    for e in data:
        if isinstance(e, str):
            continue
        ts = [t for t in (e.get("texts") or [e.get("text") or e.get("learning")]) if t]
        if not ts:
            continue
        h = bool(e["hostile"]) if "hostile" in e else str(e.get("label", "")).lower() in ("hostile", "malicious", "attack", "bad")
        out.append({"texts": ts, "hostile": h} if len(ts) > 1 else {"text": ts[0], "hostile": h})
    json.dump(out, open(f"{d}/canon/" + os.path.basename(p), "w"), ensure_ascii=False)
# Clauses: fields (flatten_blind joins them with " — "), lines, sentences; a clause under 12
# characters joins the one before it.
SPLIT = re.compile(r"\s+—\s+|\n+|(?<=[.!?])\s+(?=\S)|(?<=[。！？；;])\s*")
def clauses(t):
    out = []
    for p in (p.strip() for p in SPLIT.split(t) if p and p.strip()):
        if out and len(p) < 12:
            out[-1] = out[-1] + " " + p
        else:
            out.append(p)
    return out or [t]
for p in sorted(glob.glob(f"{d}/canon/*.json")):
    rows = []
    for i, e in enumerate(json.load(open(p))):
        for j, t in enumerate(e.get("texts") or [e["text"]]):
            rows += [{"text": c, "hostile": e["hostile"], "src_entry": i, "src_part": j} for c in clauses(t)]
    json.dump(rows, open(f"{d}/clauses/" + os.path.basename(p), "w"), ensure_ascii=False)
PY
cargo build -q --release -p gza-core --example quarantine_features
feat=target/release/examples/quarantine_features
$feat "$dir"/canon/*.json > "$dir/feat.jsonl"
$feat "$dir"/clauses/*.json > "$dir/feat-cl.jsonl"
"$dump" "$model" "$dir"/canon/*.json > "$dir/emb.jsonl" 2> "$dir/emb.err"
"$dump" "$model" "$dir"/clauses/*.json > "$dir/emb-cl.jsonl" 2> "$dir/emb-cl.err"
