#!/usr/bin/env python3
"""Checks the two runs of `make compose` (configs/synth-compose.hcl).

usage: compose-check.py GOLD_RUN_DIR FAULTS_RUN_DIR

Gold (faults_scale = 0): every scored episode has R = 1 and every
checkpoint passes. Faults (faults_scale = 1): some episodes fail; every
failed checkpoint is attributed to the policy (the planted faults are the
policy's; the environment, task and verifier are unchanged from the gold
run); SFT records and GRPO groups with a non-zero advantage come out.
Prints the figures as one JSON object; exits 1 when a check fails.
"""
import json
import os
import sys


def episodes(d):
    with open(os.path.join(d, "episodes.jsonl")) as f:
        return [json.loads(l) for l in f if l.strip()]


def lines(d, name):
    p = os.path.join(d, name)
    if not os.path.exists(p):
        return []
    with open(p) as f:
        return [json.loads(l) for l in f if l.strip()]


def main():
    gold_dir, faults_dir = sys.argv[1], sys.argv[2]
    bad = []
    gold = episodes(gold_dir)
    gold_fail = [e["key"] for e in gold if e.get("score") != 1]
    if gold_fail:
        bad.append(f"gold: {len(gold_fail)} episodes below R = 1, first {gold_fail[0]}")
    faults = episodes(faults_dir)
    failed_eps = [e for e in faults if not e.get("pass")]
    failed_cps, by_class = 0, {}
    for e in failed_eps:
        failed = {c["name"] for c in e.get("checkpoints", []) if c.get("score", 1) < 1}
        failed_cps += len(failed)
        for a in e.get("attributions", []):
            by_class[a["class"]] = by_class.get(a["class"], 0) + 1
    if not failed_eps:
        bad.append("faults: no episode failed (were the faults applied?)")
    if set(by_class) - {"policy"}:
        bad.append(f"faults: failed checkpoints blamed on {by_class}, want only the policy")
    sft = [r for r in lines(faults_dir, "sft.jsonl") if r.get("result", {}).get("accepted")]
    groups = nonzero = 0
    for r in lines(faults_dir, "grpo.jsonl"):
        for g in r.get("result", {}).get("groups", []):
            groups += 1
            if any(abs(c.get("advantage", 0)) > 0 for c in g.get("candidates", [])):
                nonzero += 1
    if not sft:
        bad.append("faults: no accepted SFT record")
    if not nonzero:
        bad.append("faults: no GRPO group with a non-zero advantage")
    out = {
        "gold_episodes": len(gold), "gold_r1": len(gold) - len(gold_fail),
        "faults_episodes": len(faults), "faults_failed_episodes": len(failed_eps),
        "faults_failed_checkpoints": failed_cps, "attributions": by_class,
        "sft_accepted": len(sft), "grpo_groups": groups, "grpo_nonzero_groups": nonzero,
        "problems": bad,
    }
    print(json.dumps(out, indent=2))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
