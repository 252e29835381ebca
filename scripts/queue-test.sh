#!/usr/bin/env bash
# The work queue's must-shows on this machine with real processes
# (docs/design/033-work-queue.md, docs/benchmarks.md "Work queue"):
#  1. same results: configs/tau2-retail.hcl (TASKS tasks) in process, then
#     with 3 `weft worker` processes + an embedded NATS server: metrics.json
#     and every dataset byte-equal;
#  2. kill -9 of a worker mid-run: the run completes, every episode once,
#     and the killed worker's plugin processes are gone;
#  3. scaling: a rollout-only run with 1, 2, 3 workers vs in process:
#     episodes/s and CPU seconds per episode (all processes, children too).
# Usage: scripts/queue-test.sh [TASKS] (default 6). Needs bin/weft (make build).
set -euo pipefail
cd "$(dirname "$0")/.."
WEFT=${WEFT:-$PWD/bin/weft}
TASKS=${1:-6}
W=$(mktemp -d /tmp/weft-queue-XXXX)
REG=$W/registry
PORT=${PORT:-14333}
URL=nats://127.0.0.1:$PORT
CFG=$PWD/configs/tau2-retail.hcl
ROLL=$W/rollout-only.hcl
sed 's/stages = \[.*\]/stages = ["import", "rollout", "verify", "attribute", "export", "report"]/' "$CFG" >"$ROLL"
sed -i "s#\"\.\./#\"$PWD/#g" "$ROLL"
common=(--registry "$REG" --skip-preflight --var task_limit="$TASKS")
fail() { echo "queue-test: FAIL: $*" >&2; exit 1; }

workers=()
start_workers() { # N LOGPREFIX
  for i in $(seq 1 "$1"); do
    "$WEFT" worker --queue "$URL" --registry "$REG" --queue-ack-wait 5s >"$W/$2-w$i.log" 2>&1 &
    workers+=($!)
  done
}
stop_workers() {
  for p in "${workers[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${workers[@]}"; do wait "$p" 2>/dev/null || true; done
  workers=()
}
trap 'stop_workers; rm -rf "$W"' EXIT
queue_run() { # OUT CFG LOG
  "$WEFT" run "$2" "${common[@]}" --out "$1" --queue "embedded://127.0.0.1:$PORT" --queue-store "$W/nats-$(basename "$1")" --queue-ack-wait 5s >"$3" 2>&1
}
same() { # A B
  cmp "$1/metrics.json" "$2/metrics.json" || fail "metrics.json differs ($1 vs $2)"
  for f in "$1"/datasets/*; do cmp "$f" "$2/datasets/$(basename "$f")" || fail "$(basename "$f") differs"; done
}

echo "== 1. same results ($TASKS tasks, full pipeline)"
"$WEFT" run "$CFG" "${common[@]}" --out "$W/inproc" >"$W/inproc.log" 2>&1 || { tail "$W/inproc.log"; fail "in-process run"; }
start_workers 3 same
queue_run "$W/queued" "$CFG" "$W/queued.log" || { tail "$W/queued.log"; fail "queued run"; }
stop_workers
same "$W/inproc" "$W/queued"
grep 'queue:' "$W/queued.log"
echo "metrics.json and $(ls "$W/inproc/datasets" | wc -l) datasets byte-equal"

echo "== 2. kill -9 of a worker mid-run"
start_workers 3 kill
victim=${workers[0]}
queue_run "$W/killed" "$CFG" "$W/killed.log" &
coord=$!
# Wait until the victim runs an episode (it has plugin children), then kill it.
for _ in $(seq 1 600); do
  kids=$(pgrep -P "$victim" || true)
  [ -n "$kids" ] && [ -s "$W/killed/episodes.jsonl" ] && break
  sleep 0.1
done
[ -n "$kids" ] || fail "the victim worker never started a plugin"
kill -9 "$victim"
echo "killed worker $victim (plugin processes: $(echo $kids))"
wait "$coord" || { tail "$W/killed.log"; fail "run after kill -9"; }
stop_workers
sleep 1
for k in $kids; do kill -0 "$k" 2>/dev/null && fail "plugin process $k of the killed worker still runs"; done
want=$(wc -l <"$W/inproc/episodes.jsonl")
got=$(wc -l <"$W/killed/episodes.jsonl")
uniq=$(grep -o '"key":"[^"]*"' "$W/killed/episodes.jsonl" | sort -u | wc -l)
[ "$got" = "$want" ] && [ "$uniq" = "$want" ] || fail "episodes: $got lines, $uniq distinct keys, want $want"
same "$W/inproc" "$W/killed"
grep 'queue:' "$W/killed.log"
echo "episodes: $got lines, $uniq distinct, want $want; no plugin process left; results byte-equal"

echo "== 3. scaling (rollout only, $TASKS tasks)"
cpu() { # pid-less: CPU of a command and its reaped children, seconds
  /usr/bin/time -f '%U %S' -o "$1" "${@:2}"
}
"$WEFT" run "$ROLL" "${common[@]}" --out "$W/warm" >/dev/null 2>&1 # compile cache warm
t0=$(date +%s.%N)
cpu "$W/cpu-inproc" "$WEFT" run "$ROLL" "${common[@]}" --out "$W/s0" >/dev/null 2>&1
t1=$(date +%s.%N)
eps=$(wc -l <"$W/s0/episodes.jsonl")
c0=$(awk '{print $1+$2}' "$W/cpu-inproc")
printf '| in process | %d | %.1f | %.2f | %.3f | 1.00 |\n' "$eps" "$(echo "$t1-$t0" | bc)" "$(echo "$eps/($t1-$t0)" | bc -l)" "$(echo "$c0/$eps" | bc -l)"
for n in 1 2 3; do
  pids=()
  for i in $(seq 1 "$n"); do
    cpu "$W/cpu-w$n-$i" "$WEFT" worker --queue "$URL" --registry "$REG" --queue-ack-wait 5s >/dev/null 2>&1 &
    pids+=($!)
  done
  t0=$(date +%s.%N)
  cpu "$W/cpu-c$n" "$WEFT" run "$ROLL" "${common[@]}" --out "$W/s$n" --queue "embedded://127.0.0.1:$PORT" --queue-store "$W/nats-s$n" >/dev/null 2>&1
  t1=$(date +%s.%N)
  for p in "${pids[@]}"; do pkill -TERM -P "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  same "$W/s0" "$W/s$n"
  c=$(cat "$W/cpu-c$n" "$W"/cpu-w$n-* | awk '{s+=$1+$2} END {print s}')
  printf '| %d workers | %d | %.1f | %.2f | %.3f | %.2f |\n' "$n" "$eps" "$(echo "$t1-$t0" | bc)" "$(echo "$eps/($t1-$t0)" | bc -l)" "$(echo "$c/$eps" | bc -l)" "$(echo "$c/$c0" | bc -l)"
done
echo "queue-test: ok"
