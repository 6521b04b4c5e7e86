#!/bin/sh
# usage: eval/quarantine/bench_neighbours.sh GZA on|off N  -> per-run "user sys maxrss" lines
G=$1; MODE=$2; N=$3
D=$(mktemp -d); mkdir -p $D/home $D/p; cd $D/p
export GZA_MODEL_DIR="${GZA_MODEL_DIR:-$HOME/.local/share/gza/models/all-MiniLM-L6-v2}"
export HOME=$D/home NO_COLOR=1 GZA_HOOKS=off
$G init >/dev/null 2>&1
V=false; [ "$MODE" = on ] && V=true
printf 'learnings:\n  extraction_provider: none\n  quarantine_neighbours: %s\n' $V > gza.yaml
# warm: model's int8 copy exists already; one add to create the db
$G learnings add -- "Warm-up learning about request handlers" >/dev/null 2>&1
i=0; while [ $i -lt $N ]; do
  /usr/bin/time -f '%U %S %M' -o $D/t $G learnings add -- "Handlers stay thin number $i; move logic into services" >/dev/null 2>&1
  cat $D/t; i=$((i+1)); sleep 0.3
done
rm -rf $D
