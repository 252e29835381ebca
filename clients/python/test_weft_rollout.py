"""Tests of weft_rollout against a running `weft rollout-service`.

Run by internal/cli's TestRolloutServicePython with WEFT_ROLLOUT_URL,
WEFT_TOKEN, POLICY_BASE_URL and POLICY_MODEL set (the policy is the repo's
local OpenAI-compatible test server, core/model/modeltest); skipped when
WEFT_ROLLOUT_URL is unset.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import weft_rollout  # noqa: E402
from weft_rollout import RolloutClient, RolloutError  # noqa: E402

URL = os.environ.get("WEFT_ROLLOUT_URL")


@unittest.skipUnless(URL, "WEFT_ROLLOUT_URL is not set")
class RolloutClientTest(unittest.TestCase):
    def setUp(self):
        self.client = RolloutClient(URL, token=os.environ.get("WEFT_TOKEN"))
        self.policy = {"base_url": os.environ["POLICY_BASE_URL"], "model": os.environ.get("POLICY_MODEL", "test-model")}
        self.tasks = sorted(self.client.tasks(), key=lambda t: (t["atomic"], t["id"]))

    def test_groups_have_the_export_shapes(self):
        ids = [t["id"] for t in self.tasks[:2]]
        groups, done = self.client.rollout(ids, 4, self.policy, sampling={"seed": 7}, batch_id="py-shapes",
                                           sft={"mode": "prefix", "retries": 1})
        self.assertEqual(done["type"], "done")
        self.assertEqual(done["tasks"], 2)
        self.assertEqual(done["tasks_failed"], 0)
        self.assertEqual(done["groups"], len(groups))
        self.assertGreaterEqual(len(groups), 2)
        for g in groups:
            self.assertIn(g["task_id"], ids)
            self.assertEqual(len(g["rewards"]), 4)
            self.assertEqual(len(g["advantages"]), 4)
            self.assertEqual(len(g["segments"]), 4)
            for i, s in enumerate(g["segments"]):
                self.assertEqual(s["group_id"], g["group_id"])
                self.assertEqual(s["reward"], g["rewards"][i])
                self.assertEqual(s["advantage"], g["advantages"][i])
                self.assertEqual(s["prompt"][0]["role"], "system")
                self.assertIsInstance(s["patterns"], list)
            # Advantages are group-normalised: they sum to ~0 unless masked.
            if not any(g["masked"]):
                self.assertAlmostEqual(sum(g["advantages"]), 0.0, places=6)
            v = g["verl"]
            self.assertEqual(set(v), {"data_source", "prompt", "ability", "reward_model", "extra_info"})
            self.assertEqual(v["extra_info"]["group_id"], g["group_id"])
            self.assertEqual(v["reward_model"]["style"], "rule")
        self.assertEqual(len(weft_rollout.segments(groups)), 4 * len(groups))
        self.assertEqual(len(weft_rollout.verl_rows(groups)), len(groups))

    def test_sft_lines(self):
        ids = [self.tasks[0]["id"]]
        with self.client.submit(ids, 2, self.policy, sampling={"seed": 3}, sft={"mode": "prefix", "retries": 2}) as b:
            lines = list(b)
        sft = [l for l in lines if l["type"] == "sft"]
        self.assertEqual(len(sft), 1)
        self.assertEqual(sft[0]["task_id"], ids[0])
        self.assertEqual(sft[0]["mode"], "prefix")
        if sft[0]["record"] is not None:
            self.assertEqual(sft[0]["record"]["messages"][0]["role"], "system")

    def test_errors_are_typed(self):
        with self.assertRaises(RolloutError) as cm:
            self.client.submit(["no-such-task", self.tasks[0]["id"]], 4, self.policy)
        self.assertEqual(cm.exception.status, 422)
        self.assertEqual(cm.exception.code, "unknown_task")
        self.assertEqual(cm.exception.tasks, ["no-such-task"])
        with self.assertRaises(RolloutError) as cm:
            self.client.submit([self.tasks[0]["id"]], 1, self.policy)
        self.assertEqual((cm.exception.status, cm.exception.code), (422, "invalid_argument"))
        with self.assertRaises(RolloutError) as cm:
            RolloutClient(URL, token="wrong").tasks()
        self.assertEqual((cm.exception.status, cm.exception.code), (401, "unauthorized"))
        self.assertEqual(self.client.status()["pending"], 0)

    def test_cancel(self):
        ids = [t["id"] for t in self.tasks[:4]]
        batch = self.client.submit(ids, 8, self.policy, batch_id="py-cancel")
        self.assertEqual(batch.accepted["batch_id"], "py-cancel")
        batch.cancel()
        for _ in range(100):
            if not any(b["batch_id"] == "py-cancel" for b in self.client.status()["batches"]):
                break
            import time
            time.sleep(0.05)
        self.assertFalse(any(b["batch_id"] == "py-cancel" for b in self.client.status()["batches"]))


if __name__ == "__main__":
    unittest.main()
