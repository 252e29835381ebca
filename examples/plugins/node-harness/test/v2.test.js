'use strict';
// The plugin process over weft.plugin.v2 against a fake host written here:
// the handshake line, Describe's Value schema, an episode whose host
// services check the bearer token, a host Failure passed on, refused
// settings as a Failure detail. Run with `node --test test/`.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');
const { grpc } = require('../lib/deps');
const { loadProtocol, loadTypes, statusError, detailOf } = require('../lib/weft');
const { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE, CHANNEL_OPTIONS } = require('../lib/goplugin');
const { fromValue } = require('../lib/value');

const pkg = loadProtocol(2);
const Failure = loadTypes(2).lookupType('weft.plugin.v2.Failure');
const TOKEN = 'test-token-3f9';

// startPlugin starts harness.js as a v2 host would and resolves to
// {proc, address, line}.
function startPlugin(versions = '2') {
  const proc = spawn(process.execPath, [path.join(__dirname, '..', 'harness.js')], {
    env: { ...process.env, [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE, PLUGIN_PROTOCOL_VERSIONS: versions },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: proc.stdout });
    rl.once('line', (line) => {
      const parts = line.split('|');
      resolve({ proc, address: parts[3], line });
    });
    proc.once('exit', (code) => reject(new Error(`plugin exited with ${code} before its handshake`)));
  });
}

// fakeHost serves Model/Env/User v2 on 127.0.0.1, checking the token. The
// model calls echo once, then answers; Env fails with a trap when
// failEnv is set.
async function fakeHost({ failEnv } = {}) {
  const seen = { generate: [], calls: [], user: [], unauthenticated: 0 };
  const authed = (call, cb) => {
    if (call.metadata.get('authorization')[0] !== 'Bearer ' + TOKEN) {
      seen.unauthenticated++;
      cb({ code: grpc.status.UNAUTHENTICATED, details: 'no or wrong bearer token' });
      return false;
    }
    return true;
  };
  const server = new grpc.Server(CHANNEL_OPTIONS);
  server.addService(pkg.Model.service, {
    Generate(call, cb) {
      if (!authed(call, cb)) return;
      seen.generate.push(call.request);
      const n = seen.generate.length;
      const message = n === 1
        ? { role: 'assistant', tool_calls: [{ id: 'call_a', name: 'echo', arguments: '{"text":"hi"}' }] }
        : { role: 'assistant', content: 'Done: hi' };
      cb(null, { message, finish_reason: n === 1 ? 'tool_calls' : 'stop' });
    },
  });
  server.addService(pkg.Env.service, {
    ListTools(call, cb) {
      if (!authed(call, cb)) return;
      cb(null, { tools: [{ name: 'echo', description: 'Echo.', input_schema: { object_value: { fields: [{ key: 'type', value: { string_value: 'object' } }] } } }] });
    },
    CallTool(call, cb) {
      if (!authed(call, cb)) return;
      seen.calls.push(call.request);
      if (failEnv) {
        cb(statusError(grpc.status.ABORTED, 'the module trapped', [[Failure, { component: 'COMPONENT_ENV', kind: 'FAILURE_KIND_TRAP', message: 'the module trapped' }]]));
        return;
      }
      cb(null, { content: 'echo: hi', ledger_index: '41' });
    },
  });
  server.addService(pkg.User.service, {
    Next(call, cb) {
      if (!authed(call, cb)) return;
      seen.user.push(call.request);
      cb(null, seen.user.length === 1 ? { content: 'Please echo hi.' } : { done: true });
    },
  });
  const port = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { server, seen, address: `127.0.0.1:${port}` };
}

function harnessClient(address) {
  return new pkg.Harness(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
}

const call = (client, method, req) =>
  new Promise((resolve, reject) => client[method](req, (err, resp) => (err ? reject(err) : resolve(resp))));

test('v2: handshake, Describe, an episode with the bearer token', async (t) => {
  const { proc, address, line } = await startPlugin('1,2');
  t.after(() => proc.kill());
  assert.match(line, /^1\|2\|tcp\|127\.0\.0\.1:\d+\|grpc$/);
  const h = harnessClient(address);
  const d = await call(h, 'Describe', {});
  assert.equal(d.name, 'node-harness');
  assert.equal(d.format, 'OUTPUT_FORMAT_NATIVE');
  assert.deepEqual(fromValue(d.settings_schema).additionalProperties, false);

  const host = await fakeHost();
  t.after(() => host.server.forceShutdown());
  const resp = await call(h, 'RunEpisode', {
    episode_id: 'ep-v2', host: { address: host.address, token: TOKEN }, system_prompt: 'Be brief.',
    limits: {}, settings: { object_value: { fields: [{ key: 'instructions', value: { string_value: 'Use echo.' } }] } },
  });
  assert.equal(host.seen.unauthenticated, 0);
  assert.equal(resp.failure, undefined);
  const tr = resp.trajectory;
  assert.equal(tr.termination, 'done');
  assert.equal(tr.tool_calls, 1);
  assert.deepEqual(tr.messages.map((m) => m.role), ['system', 'user', 'assistant', 'tool', 'assistant']);
  assert.equal(tr.messages[0].content, 'Be brief.\n\nUse echo.');
  assert.equal(tr.turns.length, 2);
  assert.equal(tr.turns[0].results[0].ledger_index, '41');
  assert.deepEqual(host.seen.calls.map((c) => [c.episode_id, c.name, c.call_id, c.arguments]), [['ep-v2', 'echo', 'call_a', '{"text":"hi"}']]);
  assert.equal(host.seen.generate[0].tools[0].name, 'echo');
  assert.equal(host.seen.generate[1].messages.at(-1).content, 'echo: hi');
});

test('v2: a host Failure is passed on; refused settings are a Failure detail', async (t) => {
  const { proc, address } = await startPlugin('2');
  t.after(() => proc.kill());
  const h = harnessClient(address);
  const host = await fakeHost({ failEnv: true });
  t.after(() => host.server.forceShutdown());
  const resp = await call(h, 'RunEpisode', { episode_id: 'ep-fail', host: { address: host.address, token: TOKEN }, limits: {} });
  assert.equal(resp.trajectory.termination, 'failure');
  assert.deepEqual(resp.failure, { component: 'COMPONENT_ENV', kind: 'FAILURE_KIND_TRAP', message: 'the module trapped' });
  assert.equal(resp.trajectory.turns.length, 1);

  // A wrong token: the host refuses, the episode fails as unauthenticated.
  const bad = await call(h, 'RunEpisode', { episode_id: 'ep-tok', host: { address: host.address, token: 'nope' }, limits: {} });
  assert.equal(bad.trajectory.termination, 'failure');
  assert.equal(bad.failure.component, 'COMPONENT_ENV');
  assert.equal(bad.failure.kind, 'FAILURE_KIND_UNAUTHENTICATED');

  await assert.rejects(
    call(h, 'RunEpisode', { episode_id: 'ep-set', host: { address: host.address, token: TOKEN }, settings: { object_value: { fields: [{ key: 'nope', value: { bool_value: true } }] } } }),
    (err) => {
      assert.equal(err.code, grpc.status.UNKNOWN);
      assert.match(err.details, /unknown setting "nope"/);
      assert.deepEqual(detailOf(err, Failure), { component: 'COMPONENT_PLUGIN', kind: 'FAILURE_KIND_ERROR', message: err.details });
      return true;
    });
});

test('a host offering no version the plugin speaks gets a clear error', async () => {
  const proc = spawn(process.execPath, [path.join(__dirname, '..', 'harness.js')], {
    env: { ...process.env, [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE, PLUGIN_PROTOCOL_VERSIONS: '7' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (b) => (stderr += b));
  const code = await new Promise((resolve) => proc.on('exit', resolve));
  assert.equal(code, 1);
  assert.match(stderr, /the host offers weft plugin protocol version\(s\) 7; this plugin speaks 2$/m);
});
