#!/usr/bin/env python3
"""A trainer loop against weft's rollout service, with the stdlib client.

Each "step" submits STEPS x (TASKS task ids x G candidates) to the service
with the policy endpoint standing for the trainer's current inference
server, consumes the GRPO groups as they stream (a real trainer would put
each group's segments into its replay buffer and start its update as soon
as it has enough), and reports the step's wall time and each group's
latency (time from submission to the group's line). What a verl or NeMo RL
loop does in its rollout phase; see docs/rollout-service.md.

    python3 trainer_sim.py --url http://127.0.0.1:7431 --token $WEFT_TOKEN \\
        --policy-url http://127.0.0.1:8000/v1 --model test-model --steps 5 --tasks 16 --group-size 8

With --json the summary is one JSON object on stdout (per-step figures and
the totals); otherwise a table.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from weft_rollout import RolloutClient  # noqa: E402


def quantile(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    i = min(len(xs) - 1, max(0, int(round(q * (len(xs) - 1)))))
    return xs[i]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default=os.environ.get("WEFT_ROLLOUT_URL", "http://127.0.0.1:7431"))
    ap.add_argument("--token", default=os.environ.get("WEFT_TOKEN"))
    ap.add_argument("--policy-url", default=os.environ.get("POLICY_BASE_URL", "http://127.0.0.1:8000/v1"))
    ap.add_argument("--model", default=os.environ.get("POLICY_MODEL", "test-model"))
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--tasks", type=int, default=16)
    ap.add_argument("--group-size", type=int, default=8)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    client = RolloutClient(args.url, token=args.token)
    if not client.healthz():
        print("trainer_sim: %s/healthz does not answer" % args.url, file=sys.stderr)
        return 1
    # The shortest tasks first keeps the simulation fast; a trainer picks
    # its step's prompts from its dataloader instead.
    pool = sorted(client.tasks(), key=lambda t: (t["atomic"], t["id"]))
    if len(pool) < args.tasks:
        print("trainer_sim: the service has %d trainable tasks, %d asked" % (len(pool), args.tasks), file=sys.stderr)
        return 1
    policy = {"base_url": args.policy_url, "model": args.model, "max_retries": 2}
    steps = []
    for step in range(args.steps):
        # A new slice of the pool each step, as an epoch over the data.
        off = (step * args.tasks) % (len(pool) - args.tasks + 1)
        ids = [t["id"] for t in pool[off:off + args.tasks]]
        t0 = time.monotonic()
        latencies, segments, nonzero, rewards = [], 0, 0, []
        first = None
        with client.submit(ids, args.group_size, policy, sampling={"temperature": 1.0, "seed": 1000 + step},
                           batch_id="step-%d" % step, seed=step) as batch:
            for g in batch.groups():
                now = (time.monotonic() - t0) * 1000.0
                if first is None:
                    first = now
                latencies.append(g["elapsed_ms"])
                segments += len(g["segments"])
                nonzero += 1 if g["nonzero"] else 0
                rewards.extend(g["rewards"])
                # The trainer's side: every segment has its advantage.
                for s in g["segments"]:
                    assert s["group_id"] == g["group_id"] and "advantage" in s, s
        done = batch.done
        wall = (time.monotonic() - t0) * 1000.0
        steps.append({
            "step": step, "tasks": len(ids), "group_size": args.group_size,
            "groups": done["groups"], "segments": segments, "nonzero_groups": nonzero,
            "tasks_failed": done["tasks_failed"], "mean_reward": sum(rewards) / len(rewards) if rewards else None,
            "wall_ms": round(wall, 1), "first_group_ms": round(first, 1) if first is not None else None,
            "group_latency_p50_ms": quantile(latencies, 0.5), "group_latency_p90_ms": quantile(latencies, 0.9),
            "group_latency_max_ms": max(latencies) if latencies else None,
            "task_errors": [e["error"] for e in batch.task_errors][:3],
        })
        if done["groups"] != len(latencies) or done["segments"] != segments:
            print("trainer_sim: step %d: done says %d groups / %d segments, %d / %d read"
                  % (step, done["groups"], done["segments"], len(latencies), segments), file=sys.stderr)
            return 1
    total = {
        "steps": len(steps), "groups": sum(s["groups"] for s in steps), "segments": sum(s["segments"] for s in steps),
        "tasks_failed": sum(s["tasks_failed"] for s in steps),
        "wall_ms": round(sum(s["wall_ms"] for s in steps), 1),
    }
    if args.json:
        json.dump({"steps": steps, "total": total}, sys.stdout)
        sys.stdout.write("\n")
    else:
        print("step  tasks  G  groups  nonzero  segments  failed  wall ms  first ms  p50 ms  p90 ms  max ms")
        for s in steps:
            print("%4d  %5d  %d  %6d  %7d  %8d  %6d  %7.0f  %8.0f  %6.0f  %6.0f  %6.0f" % (
                s["step"], s["tasks"], s["group_size"], s["groups"], s["nonzero_groups"], s["segments"],
                s["tasks_failed"], s["wall_ms"], s["first_group_ms"] or 0, s["group_latency_p50_ms"] or 0,
                s["group_latency_p90_ms"] or 0, s["group_latency_max_ms"] or 0))
        print("total: %(steps)d steps, %(groups)d groups, %(segments)d segments, %(tasks_failed)d tasks failed, %(wall_ms).0f ms" % total)
    return 0 if total["tasks_failed"] == 0 and total["groups"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
