'use strict';
// weft's plugin protocol from Node: the services of plugin.proto loaded at
// run time (no generated code), the error encoding of sdk/plugin/status.go,
// and clients of the host services (Model, Env, User) of one episode.

const path = require('node:path');
const { grpc, protoLoader, protobuf, protoDir, localProtoDir } = require('./deps');
const { LOADER_OPTIONS } = require('./goplugin');

// loadProtocol loads weft.plugin.v<version> from plugins/proto and returns
// its package object (services as grpc-js client constructors with
// .service definitions).
function loadProtocol(version) {
  const file = path.join(protoDir, 'weft', 'plugin', `v${version}`, 'plugin.proto');
  const def = protoLoader.loadSync(file, { ...LOADER_OPTIONS, includeDirs: [protoDir] });
  return grpc.loadPackageDefinition(def).weft.plugin[`v${version}`];
}

// google.rpc.Status and google.protobuf.Struct, for the
// grpc-status-details-bin trailer. protobufjs's built-in well-known types
// keep their JSON (camelCase) field names: Value.stringValue.
const statusRoot = new protobuf.Root();
statusRoot.loadSync(path.join(localProtoDir, 'status.proto'), { keepCase: true });
statusRoot.loadSync('google/protobuf/struct.proto', { keepCase: true });
const Status = statusRoot.lookupType('google.rpc.Status');
const Struct = statusRoot.lookupType('google.protobuf.Struct');
const STRUCT_URL = 'type.googleapis.com/google.protobuf.Struct';
const DETAILS_KEY = 'grpc-status-details-bin';

// HostError is a host service's failure as the harness sees it (the model
// endpoint is down, a tool module trapped): service "model", "env" or
// "user", kind a snake_case word of the host's. It ends the episode with
// Failure{kind: service + "_" + kind}.
class HostError extends Error {
  constructor(service, kind, message, code) {
    super(`host ${service} service: ${kind}: ${message}`);
    this.service = service;
    this.kind = kind;
    this.detail = message;
    this.code = code;
  }
}

// statusError builds the error object grpc-js sends for a failed call:
// code, message, and one Struct detail (fields: string values) in the
// grpc-status-details-bin trailer. The Status's code must equal the call's
// status code, or Go clients ignore the detail.
function statusError(code, message, fields) {
  const struct = Struct.fromObject({
    fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { stringValue: v }])),
  });
  const st = Status.encode(Status.fromObject({
    code,
    message,
    details: [{ type_url: STRUCT_URL, value: Struct.encode(struct).finish() }],
  })).finish();
  const md = new grpc.Metadata();
  md.set(DETAILS_KEY, Buffer.from(st));
  return { code, details: message, metadata: md };
}

// pluginError is how a plugin method's own error crosses the wire: status
// UNKNOWN with detail {"weft_error": "plugin_error"}; the host reports it as
// a PluginError of kind "error" with the message (e.g. refused settings).
function pluginError(err) {
  return statusError(grpc.status.UNKNOWN, err && err.message ? err.message : String(err), { weft_error: 'plugin_error' });
}

// weftDetail returns the fields of the weft_error Struct detail of a failed
// call's error ({} when there is none).
function weftDetail(err) {
  const bins = err && err.metadata ? err.metadata.get(DETAILS_KEY) : [];
  for (const bin of bins) {
    let st;
    try {
      st = Status.decode(Buffer.isBuffer(bin) ? bin : Buffer.from(bin));
    } catch (_) {
      continue;
    }
    for (const any of st.details || []) {
      if (!String(any.type_url).endsWith('/google.protobuf.Struct')) continue;
      const fields = Struct.toObject(Struct.decode(any.value)).fields || {};
      if (fields.weft_error) {
        return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.stringValue]));
      }
    }
  }
  return {};
}

// decodeHostError turns a failed host call into a HostError: the host's
// {service, kind} detail when present, else a kind from the gRPC code
// ("deadline", "canceled", "unavailable", "internal"), as
// sdk/plugin/status.go decodeHostError does.
function decodeHostError(service, err) {
  const d = weftDetail(err);
  const message = err.details || err.message || String(err);
  if (d.weft_error === 'host_error') return new HostError(d.service || service, d.kind || 'internal', message, err.code);
  const kind = {
    [grpc.status.DEADLINE_EXCEEDED]: 'deadline',
    [grpc.status.CANCELLED]: 'canceled',
    [grpc.status.UNAVAILABLE]: 'unavailable',
  }[err.code] || 'internal';
  return new HostError(service, kind, message, err.code);
}

// HostClients holds one gRPC channel's clients of the host services,
// cached by target ("127.0.0.1:PORT", "unix:/path").
class HostClients {
  constructor(pkg, channelOptions) {
    this.pkg = pkg;
    this.options = channelOptions;
    this.byTarget = new Map();
  }

  get(target) {
    let c = this.byTarget.get(target);
    if (!c) {
      const creds = grpc.credentials.createInsecure();
      c = {
        model: new this.pkg.Model(target, creds, this.options),
        env: new this.pkg.Env(target, creds, this.options),
        user: new this.pkg.User(target, creds, this.options),
      };
      this.byTarget.set(target, c);
    }
    return c;
  }
}

// EpisodeHost is the harness's view of one episode's host services. Every
// request gets the episode id; every call takes a deadline (ms since the
// epoch, Infinity = none) and is cancelled when the episode is aborted
// (the host cancelled RunEpisode). Failures reject with a HostError.
class EpisodeHost {
  constructor(clients, episodeId, callDeadline) {
    this.c = clients || {}; // null: no host services (every call fails "unavailable")
    this.ep = episodeId;
    this.callDeadline = callDeadline; // RunEpisode's own deadline
    this.inflight = new Set();
    this.aborted = false;
  }

  abort() {
    this.aborted = true;
    for (const call of this.inflight) call.cancel();
  }

  invoke(service, client, method, req, deadline) {
    return new Promise((resolve, reject) => {
      if (this.aborted) {
        reject(new HostError(service, 'canceled', 'the host cancelled the episode', grpc.status.CANCELLED));
        return;
      }
      if (!client) {
        reject(new HostError(service, 'unavailable', 'the host offered no host services for this call', grpc.status.UNAVAILABLE));
        return;
      }
      const opts = {};
      const dl = Math.min(deadline, this.callDeadline);
      if (Number.isFinite(dl)) opts.deadline = new Date(dl);
      const call = client[method]({ ...req, episode_id: this.ep }, opts, (err, resp) => {
        this.inflight.delete(call);
        if (err) reject(decodeHostError(service, err));
        else resolve(resp);
      });
      this.inflight.add(call);
    });
  }

  generate(req, deadline) {
    return this.invoke('model', this.c.model, 'Generate', req, deadline);
  }

  listTools(deadline) {
    return this.invoke('env', this.c.env, 'ListTools', {}, deadline);
  }

  callTool(req, deadline) {
    return this.invoke('env', this.c.env, 'CallTool', req, deadline);
  }

  userNext(messages, deadline) {
    return this.invoke('user', this.c.user, 'Next', { messages }, deadline);
  }
}

module.exports = { loadProtocol, HostError, statusError, pluginError, weftDetail, decodeHostError, HostClients, EpisodeHost };
