#!/bin/sh
# Train the quarantine's learned layer (h) on every labelled set and measure it
# leave-one-set-out; writes crates/gza-core/data/quarantine-learned.bin and prints the figures
# (docs/quarantine.md, layer h). Also trained on: the labelled lists of tests/it/quarantine.rs,
# and as harmless data the ordinary learnings of the three relevance sets (a model that holds
# plain conventions is useless). Deterministic: the same sets
# give the same bytes.
#
#   eval/quarantine/train_learned.sh [--dry-run]
set -eu
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in blind blind-q3 blind-q4 blind-q5; do
    python3 eval/quarantine/flatten_blind.py "eval/quarantine/$s.json" > "$tmp/$s.json"
done
for n in learnings-set wrenchly/learnings-set fieldline/learnings-set; do
    python3 - "$n" "$tmp" <<'PY'
import json, sys
n, tmp = sys.argv[1], sys.argv[2]
d = json.load(open(f"eval/{n}.json"))
json.dump([{"text": l["text"], "hostile": False} for l in d["learnings"]],
          open(f"{tmp}/ordinary-{n.split('/')[0]}.json", "w"))
PY
done
sets="eval/quarantine/corpus.json eval/quarantine/dev.json"
for i in "" 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19; do sets="$sets eval/quarantine/val$i.json"; done
sets="$sets $tmp/blind.json $tmp/blind-q3.json $tmp/blind-q4.json $tmp/blind-q5.json"
python3 eval/quarantine/from_tests.py > "$tmp/tests-it.json"
sets="$sets $tmp/tests-it.json"
sets="$sets $tmp/ordinary-learnings-set.json $tmp/ordinary-wrenchly.json $tmp/ordinary-fieldline.json"
out="--out crates/gza-core/data/quarantine-learned.bin"
[ "${1:-}" = "--dry-run" ] && out=""
cargo run -q --release -p gza-core --example quarantine_train -- $out $sets
