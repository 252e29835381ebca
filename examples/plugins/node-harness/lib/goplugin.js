'use strict';
// The plugin side of hashicorp/go-plugin's gRPC transport, written from its
// documented protocol: the magic cookie, protocol version negotiation, the
// handshake line on stdout, and the services a go-plugin host calls
// (grpc.health.v1.Health, plugin.GRPCController, plugin.GRPCStdio; not
// plugin.GRPCBroker, which weft.plugin.v2 does not use: the host ignores
// its absence). The weft services themselves are registered by the caller
// (see serve).

// The host's pid, read before anything slow: when it changes, the host is
// gone (see serve).
const HOST_PID = process.ppid;

const path = require('node:path');
const { grpc, protoLoader, localProtoDir } = require('./deps');

// weft's handshake (sdk/plugin/handshake.go): the host sets this variable;
// run without it, the binary is not being started by weft.
const MAGIC_COOKIE_KEY = 'WEFT_PLUGIN';
const MAGIC_COOKIE_VALUE = 'b8f3c1d2-weft-plugin-7e4a9c60';
// go-plugin's core protocol version: the first field of the handshake line.
const CORE_PROTOCOL_VERSION = 1;

// Unlimited message sizes, as go-plugin sets on its side (prompts of long
// episodes exceed gRPC's default 4 MiB receive limit).
const CHANNEL_OPTIONS = {
  'grpc.max_receive_message_length': -1,
  'grpc.max_send_message_length': -1,
};

const LOADER_OPTIONS = { keepCase: true, longs: String, enums: String, defaults: false, oneofs: false };

// log writes one hclog JSON line to stderr; the host parses it into its own
// log record (level, message, key/value pairs). The timestamp needs six
// fractional digits: go-plugin parses it with the layout
// 2006-01-02T15:04:05.000000Z07:00 and treats the line as plain text if it
// does not match.
function log(level, message, fields) {
  const ts = new Date().toISOString().replace(/Z$/, '000Z');
  const rec = { '@level': level, '@message': message, '@module': 'node-harness', '@timestamp': ts };
  for (const [k, v] of Object.entries(fields || {})) rec[k] = v;
  process.stderr.write(JSON.stringify(rec) + '\n');
}

// negotiate picks the protocol version: the highest one both the host
// (PLUGIN_PROTOCOL_VERSIONS, comma-separated) and the plugin speak. A host
// that sets no list gets the plugin's lowest version (go-plugin's
// behaviour: the handshake's default version). Returns
// {version} or {error}.
function negotiate(supported, env) {
  const offered = (env.PLUGIN_PROTOCOL_VERSIONS || '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(Number);
  const mine = [...supported].sort((a, b) => b - a);
  if (offered.length === 0) return { version: mine[mine.length - 1] };
  for (const v of mine) {
    if (offered.includes(v)) return { version: v };
  }
  return {
    error: `the host offers weft plugin protocol version(s) ${offered.join(', ')}; ` +
      `this plugin speaks ${mine.join(', ')}`,
  };
}

function loadLocal(file) {
  const def = protoLoader.loadSync(path.join(localProtoDir, file), { ...LOADER_OPTIONS, includeDirs: [localProtoDir] });
  return grpc.loadPackageDefinition(def);
}

// serve starts the plugin: it checks the magic cookie, negotiates the
// protocol version among Object.keys(versions), lets versions[v](server,
// ctx) register the weft services, listens on 127.0.0.1 and prints the
// handshake line. ctx holds {log, channelOptions, version}.
// Returns a promise of the running server.
async function serve({ versions, name }) {
  if (process.env[MAGIC_COOKIE_KEY] !== MAGIC_COOKIE_VALUE) {
    process.stderr.write(
      `${name} is a weft plugin: weft starts it (weft plugin conformance PATH, or a harness { binary = ... } block).\n` +
        'It is not meant to be run by hand.\n');
    process.exit(1);
  }
  if (process.env.PLUGIN_CLIENT_CERT) {
    // go-plugin AutoMTLS: the host wants a certificate back in the 6th
    // field. weft's host does not enable it; this plugin does not do TLS.
    log('error', 'the host asks for go-plugin AutoMTLS (PLUGIN_CLIENT_CERT), which this plugin does not implement');
    process.exit(1);
  }
  const picked = negotiate(Object.keys(versions).map(Number), process.env);
  if (picked.error) {
    log('error', picked.error);
    process.stderr.write(`${name}: ${picked.error}\n`);
    process.exit(1);
  }
  const version = picked.version;

  const server = new grpc.Server(CHANNEL_OPTIONS);
  const streams = new Set(); // long-lived streams to end on shutdown
  let shuttingDown = false;
  const shutdown = (why, code = 0) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log('debug', 'plugin exiting', { reason: why });
    for (const s of streams) {
      try {
        s.end();
      } catch (_) {
        // the stream is already gone
      }
    }
    server.tryShutdown(() => process.exit(code));
    setTimeout(() => process.exit(code), 1000).unref();
  };

  const health = loadLocal('health.proto').grpc.health.v1;
  const serving = (service) => service === '' || service === 'plugin';
  server.addService(health.Health.service, {
    Check(call, cb) {
      if (!serving(call.request.service || '')) {
        cb({ code: grpc.status.NOT_FOUND, details: `unknown service ${call.request.service}` });
        return;
      }
      cb(null, { status: 'SERVING' });
    },
    Watch(call) {
      call.write({ status: serving(call.request.service || '') ? 'SERVING' : 'SERVICE_UNKNOWN' });
      streams.add(call);
      call.on('cancelled', () => streams.delete(call));
    },
  });

  const gp = loadLocal('goplugin.proto').plugin;
  server.addService(gp.GRPCController.service, {
    Shutdown(call, cb) {
      cb(null, {});
      setImmediate(() => shutdown('the host called GRPCController.Shutdown'));
    },
  });
  server.addService(gp.GRPCStdio.service, {
    // This plugin writes nothing to stdout after the handshake and logs
    // to stderr, which the host reads directly: the stream stays open and
    // empty until the plugin exits.
    StreamStdio(call) {
      streams.add(call);
      call.on('cancelled', () => streams.delete(call));
    },
  });
  versions[version](server, { log, channelOptions: CHANNEL_OPTIONS, version });

  const port = await new Promise((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  // The handshake: CORE|APP|NETWORK|ADDRESS|PROTOCOL, one line on stdout.
  process.stdout.write(`${CORE_PROTOCOL_VERSION}|${version}|tcp|127.0.0.1:${port}|grpc\n`);
  log('debug', 'plugin serving', { address: `127.0.0.1:${port}`, protocol_version: version });

  // go-plugin ignores SIGINT in plugins (Ctrl-C at the host's terminal
  // reaches the whole group; the host decides); SIGTERM ends the plugin.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  // The host went away without Shutdown (it crashed or was killed): this
  // process was re-parented, so it exits instead of lingering.
  setInterval(() => {
    if (process.ppid !== HOST_PID) shutdown('the host process is gone');
  }, 500).unref();
  return server;
}

module.exports = { serve, negotiate, log, CHANNEL_OPTIONS, LOADER_OPTIONS, MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE };
