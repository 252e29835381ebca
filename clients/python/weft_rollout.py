"""weft_rollout: a standard-library-only client of weft's rollout service.

A trainer (verl, NeMo RL, prime-rl, your own loop) calls the service every
step to get the next GRPO groups sampled from its *current* policy, i.e.
its own OpenAI-compatible inference server. The service is
``weft rollout-service CONFIG`` (docs/rollout-service.md); this module
speaks its HTTP API with ``urllib`` only, so it imports into any Python
>= 3.8 environment without installing anything.

    from weft_rollout import RolloutClient

    client = RolloutClient("http://weft:7431", token=os.environ["WEFT_TOKEN"])
    policy = {"base_url": "http://localhost:8000/v1", "model": "Qwen/Qwen3-8B"}
    with client.submit(task_ids, group_size=8, policy=policy,
                       sampling={"temperature": 1.0, "seed": step}) as batch:
        for group in batch.groups():          # as each group finishes
            for seg in group["segments"]:     # rl.segments.jsonl lines
                buffer.add(seg["prompt"], seg["completion"], seg["advantage"])
    print(batch.done)                         # the stream's last line

Every refusal raises RolloutError (``status``, ``code``, ``message``,
``tasks``, ``retry_after``); a 429 is retried after its Retry-After while
``max_wait`` allows (``AtCapacity`` when it does not). Closing a batch (or
leaving its ``with`` block) before the end cancels it on the service.
"""

import json
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["RolloutClient", "Batch", "RolloutError", "AtCapacity"]

LINE_ACCEPTED = "accepted"
LINE_GROUP = "group"
LINE_SFT = "sft"
LINE_TASK_DONE = "task_done"
LINE_TASK_ERROR = "task_error"
LINE_DONE = "done"


class RolloutError(Exception):
    """A request the service refused: HTTP status and its JSON error body."""

    def __init__(self, status, code, message, tasks=None, retry_after=None):
        super().__init__("%d %s: %s" % (status, code, message))
        self.status = status
        self.code = code
        self.message = message
        self.tasks = tasks or []
        self.retry_after = retry_after


class AtCapacity(RolloutError):
    """429 at_capacity: the service has too many tasks pending."""


def _error_from(e):
    """RolloutError from a urllib HTTPError with weft's JSON error body."""
    raw = e.read()
    try:
        body = json.loads(raw.decode("utf-8"))["error"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        body = {"code": "http_%d" % e.code, "message": raw.decode("utf-8", "replace")[:500]}
    retry = e.headers.get("Retry-After") if e.headers else None
    cls = AtCapacity if e.code == 429 else RolloutError
    return cls(e.code, body.get("code", ""), body.get("message", ""), body.get("tasks"),
               float(retry) if retry else None)


class Batch:
    """An admitted batch: iterate it for every stream line (dicts), or
    call groups() for the group lines only. ``accepted`` is the first
    line, ``done`` the last (None until read); ``task_errors`` and
    ``sft`` collect those lines as they pass."""

    def __init__(self, client, resp):
        self._client = client
        self._resp = resp
        self.accepted = self._read()
        if not self.accepted or self.accepted.get("type") != LINE_ACCEPTED:
            raise RolloutError(resp.status, "bad_stream", "first line is not 'accepted': %r" % (self.accepted,))
        self.id = self.accepted["batch_id"]
        self.done = None
        self.task_errors = []
        self.sft = []

    def _read(self):
        while True:
            line = self._resp.readline()
            if not line:
                return None
            line = line.strip()
            if line:
                return json.loads(line.decode("utf-8"))

    def __iter__(self):
        while self.done is None:
            line = self._read()
            if line is None:
                raise RolloutError(0, "stream_ended", "the stream of batch %s ended without its 'done' line" % self.id)
            kind = line.get("type")
            if kind == LINE_DONE:
                self.done = line
                self._resp.close()
            elif kind == LINE_TASK_ERROR:
                self.task_errors.append(line)
            elif kind == LINE_SFT:
                self.sft.append(line)
            yield line

    def groups(self):
        """Yield each group line as it arrives (see docs/rollout-service.md:
        rewards, advantages, masked, segments, verl)."""
        for line in self:
            if line.get("type") == LINE_GROUP:
                yield line

    def cancel(self):
        """Cancel the batch on the service (DELETE), then close the stream."""
        if self.done is None:
            try:
                self._client.cancel(self.id)
            except RolloutError as e:
                if e.status != 404:  # 404: it finished meanwhile
                    raise
        self.close()

    def close(self):
        """Close the stream; an unfinished batch is canceled by the service."""
        self._resp.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.done is None:
            self.cancel()
        self.close()
        return False


class RolloutClient:
    """Client of one rollout service at base_url (e.g. "http://weft:7431")."""

    def __init__(self, base_url, token=None, timeout=600.0):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def _request(self, method, path, body=None, timeout=None):
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        try:
            return urllib.request.urlopen(req, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as e:
            raise _error_from(e) from None

    def _json(self, method, path, body=None):
        with self._request(method, path, body) as resp:
            return json.loads(resp.read().decode("utf-8"))

    def healthz(self):
        """True when GET /healthz answers ok (no token needed)."""
        try:
            with self._request("GET", "/healthz", timeout=10) as resp:
                return resp.status == 200
        except (RolloutError, OSError):
            return False

    def tasks(self):
        """The trainable tasks: [{"id", "atomic", "source"}] (GET /v1/tasks)."""
        return self._json("GET", "/v1/tasks")["tasks"]

    def status(self):
        """Admitted batches and the admission count (GET /v1/rollouts)."""
        return self._json("GET", "/v1/rollouts")

    def cancel(self, batch_id):
        """Cancel an admitted batch (DELETE /v1/rollouts/{id})."""
        return self._json("DELETE", "/v1/rollouts/" + urllib.parse.quote(batch_id, safe=""))

    def submit(self, tasks, group_size, policy, sampling=None, max_wait=60.0, **options):
        """Submit a batch and return its Batch once admitted.

        tasks: task ids of the service's config; group_size: G (>= 2);
        policy: {"base_url", "model", "api_key"?, "timeout_s"?,
        "max_retries"?, "max_concurrency"?, "extra_body"?}; sampling:
        {"temperature", "top_p", "max_tokens", "seed", "stop", "logprobs"};
        options: batch_id, level, continue_ ("continue"), mask, reward, eps,
        view, harness, seed, sft ({"mode", "retries", "threshold"}),
        data_source. A 429 is retried after its Retry-After until max_wait
        seconds have passed, then raised as AtCapacity.
        """
        body = {"tasks": list(tasks), "group_size": group_size, "policy": policy}
        if sampling:
            body["sampling"] = sampling
        for k, v in options.items():
            if v is not None:
                body["continue" if k == "continue_" else k] = v
        deadline = time.monotonic() + max_wait
        while True:
            try:
                resp = self._request("POST", "/v1/rollouts", body)
                return Batch(self, resp)
            except AtCapacity as e:
                wait = e.retry_after or 1.0
                if time.monotonic() + wait > deadline:
                    raise
                time.sleep(wait)

    def rollout(self, tasks, group_size, policy, **kw):
        """Submit a batch and return (groups, done): every group line in
        arrival order and the last line."""
        with self.submit(tasks, group_size, policy, **kw) as batch:
            groups = list(batch.groups())
        return groups, batch.done


def segments(groups):
    """The rl.segments.jsonl records of group lines, in order."""
    return [s for g in groups for s in g["segments"]]


def verl_rows(groups):
    """The verl RL rows (rl.verl.parquet's columns) of group lines."""
    return [g["verl"] for g in groups if g.get("verl")]
