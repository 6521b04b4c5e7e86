#!/bin/sh
# Wall time of `gza work` whose regeneration meets an unresponsive extraction endpoint, then of
# the next `gza work` while the endpoint is backed off. Usage:
#   scripts/bench-extraction-window.sh path/to/gza DEADLINE_SECONDS
# 15 tasks, regenerate_every 15, timeout_seconds 5 (one call gives up after 10 s), concurrency 4.
set -eu
gza=$(realpath "$1")
deadline=$2
dir=$(mktemp -d)
trap 'kill $server 2>/dev/null; rm -rf "$dir"' EXIT
# A server that accepts connections and never answers.
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
held = []
while True:
    c, _ = s.accept(); held.append(c)
' > "$dir/port" &
server=$!
sleep 0.5
port=$(cat "$dir/port")
cd "$dir" && mkdir proj && cd proj
"$gza" init > /dev/null
printf 'cat > /dev/null\necho "Tests pass."\n' > "$dir/agent.sh"
cat > gza.yaml <<YAML
provider: command
providers:
  command:
    command: [sh, $dir/agent.sh]
learnings:
  extraction_provider: anthropic
  base_url: http://127.0.0.1:$port
  regenerate_every: 15
  timeout_seconds: 5
  concurrency: 4
  extraction_deadline_seconds: $deadline
YAML
"$gza" trust --yes > /dev/null
export ANTHROPIC_API_KEY=sk-ant-bench
for i in $(seq 1 15); do "$gza" add -q "task $i" --type explore > /dev/null; done
t0=$(date +%s.%N)
"$gza" work --all > /dev/null 2>&1
t1=$(date +%s.%N)
for i in $(seq 16 30); do "$gza" add -q "task $i" --type explore > /dev/null; done
"$gza" work --all > /dev/null 2>&1
t2=$(date +%s.%N)
echo "deadline ${deadline}s: first work $(echo "$t1 - $t0" | bc) s, second work (15 more tasks) $(echo "$t2 - $t1" | bc) s"
grep -E "deadline|no extraction calls|every extraction call failed" .gza/logs/learnings.log | sed 's/^[^ ]* //' | cut -c1-150
