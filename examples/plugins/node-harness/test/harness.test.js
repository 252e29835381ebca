'use strict';
// The episode loop in process, against a scripted host object.

const test = require('node:test');
const assert = require('node:assert/strict');
const { runEpisode, parseSettings, checkHistory, uniqueId, clip } = require('../lib/harness');
const { HostError } = require('../lib/weft');

// scriptedHost answers Generate with answers[n] (a function of the request
// or a message), echoes tool calls with ledger indices from 100, and ends
// the conversation at the second User.Next.
function scriptedHost(answers, { failCall } = {}) {
  const seen = { generate: [], calls: [], user: [] };
  return {
    seen,
    aborted: false,
    async listTools() {
      return { tools: [{ name: 'echo' }] };
    },
    async generate(req) {
      seen.generate.push(req);
      const a = answers[seen.generate.length - 1];
      if (a instanceof Error) throw a;
      return { message: a };
    },
    async callTool(req) {
      seen.calls.push(req);
      if (failCall) throw failCall;
      return { content: 'echo: ' + JSON.parse(req.arguments).text, ledger_index: String(100 + seen.calls.length - 1) };
    },
    async userNext(messages) {
      seen.user.push(messages);
      return seen.user.length === 1 ? { content: 'hello' } : { done: true };
    },
  };
}

const echo = (id, text) => ({ id, name: 'echo', arguments: JSON.stringify({ text }) });

test('max_tool_calls stops before the call past it; unrun calls leave the canonical message', async () => {
  const host = scriptedHost([{ role: 'assistant', tool_calls: [echo('a', '1'), echo('b', '2'), echo('c', '3')] }]);
  const { trajectory: tr, hostError } = await runEpisode({ limits: { max_tool_calls: 2 } }, host);
  assert.equal(hostError, undefined);
  assert.equal(tr.termination, 'max_tool_calls');
  assert.equal(tr.tool_calls, 2);
  assert.deepEqual(host.seen.calls.map((c) => c.call_id), ['a', 'b']);
  assert.deepEqual(tr.turns[0].calls.map((c) => c.id), ['a', 'b', 'c']);
  assert.deepEqual(tr.messages[2].tool_calls.map((c) => c.id), ['a', 'b']);
  assert.deepEqual(tr.turns[0].results.map((r) => [r.call_id, r.ledger_index]), [['a', '100'], ['b', '101']]);
});

test('empty and repeated model call ids are replaced; history ids are never reused', async () => {
  const history = [
    { role: 'user', content: 'first' },
    { role: 'assistant', tool_calls: [echo('call_4_0', 'h')] },
    { role: 'tool', tool_call_id: 'call_4_0', name: 'echo', content: 'echo: h' },
  ];
  const host = scriptedHost([
    { role: 'assistant', tool_calls: [echo('', 'x'), echo('call_4_0', 'y'), echo('dup', 'z'), echo('dup', 'w')] },
    { role: 'assistant', content: 'done' },
  ]);
  const { trajectory: tr } = await runEpisode({ history, limits: {} }, host);
  assert.equal(tr.termination, 'done');
  assert.deepEqual(host.seen.calls.map((c) => c.call_id), ['call_5_0', 'call_5_1', 'dup', 'call_5_3']);
  assert.deepEqual(host.seen.user[0], history);
  assert.deepEqual(tr.messages.slice(1, 4), history);
  assert.equal(tr.turns[0].index, 0);
});

test('a host failure ends the episode with the partial trajectory', async () => {
  const host = scriptedHost([{ role: 'assistant', tool_calls: [echo('a', '1')] }], { failCall: new HostError('env', 'trap', 'boom') });
  const { trajectory: tr, hostError } = await runEpisode({ limits: {} }, host);
  assert.equal(tr.termination, 'failure');
  assert.equal(hostError.kind, 'trap');
  assert.equal(tr.turns.length, 1);
  assert.deepEqual(tr.messages[2].tool_calls, []); // the call never ran
});

test('an empty answer is a format-error turn with feedback; max_result_chars clips what the model sees', async () => {
  const host = scriptedHost([
    { role: 'assistant', content: '  ' },
    { role: 'assistant', tool_calls: [echo('a', 'abcdefghij')] },
    { role: 'assistant', content: 'ok' },
  ]);
  const { trajectory: tr } = await runEpisode({ limits: {}, settings: { max_result_chars: 4 } }, host);
  assert.equal(tr.termination, 'done');
  assert.equal(tr.format_errors, 1);
  assert.match(tr.turns[0].format_error, /empty/);
  assert.match(host.seen.generate[1].messages.at(-1).content, /^Your last reply could not be parsed/);
  assert.equal(tr.turns[1].results[0].content, 'echo: abcdefghij');
  assert.equal(host.seen.generate[2].messages.at(-1).content, 'echo\n[... 12 more characters cut by the harness]');
  assert.equal(tr.messages.filter((m) => m.role === 'assistant').length, 2); // the empty answer is not canonical
});

test('settings are checked strictly', () => {
  assert.deepEqual(parseSettings(undefined), { instructions: '', max_result_chars: 0 });
  assert.deepEqual(parseSettings({ instructions: 'x', max_result_chars: 3 }), { instructions: 'x', max_result_chars: 3 });
  assert.throws(() => parseSettings([1]), /want a JSON object/);
  assert.throws(() => parseSettings({ max_result_chars: -1 }), /non-negative integer/);
  assert.throws(() => parseSettings({ other: 1 }), /unknown setting "other"/);
});

test('an invalid history is refused before any host call', async () => {
  assert.throws(() => checkHistory([{ role: 'system', content: 's' }]), /no system message/);
  assert.throws(() => checkHistory([{ role: 'assistant', tool_calls: [echo('a', '1')] }, { role: 'user', content: 'u' }]), /not answered before message 1/);
  assert.throws(() => checkHistory([{ role: 'tool', tool_call_id: 'a' }]), /must follow the assistant message/);
  const host = scriptedHost([]);
  await assert.rejects(runEpisode({ history: [{ role: 'robot' }] }, host), /role "robot"/);
  assert.equal(host.seen.user.length, 0);
});

test('uniqueId and clip', () => {
  const used = new Set(['call_0_0']);
  assert.equal(uniqueId(used, '', 0, 0), 'call_0_0_1');
  assert.equal(uniqueId(used, 'x', 0, 1), 'x');
  assert.equal(uniqueId(used, 'x', 0, 1), 'call_0_1');
  assert.equal(clip('abc', 0), 'abc');
  assert.equal(clip('abc', 3), 'abc');
});
