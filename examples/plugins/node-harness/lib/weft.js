'use strict';
// weft's plugin protocol from Node, the parts every protocol version
// shares: plugin.proto loaded at run time (no generated code), the
// google.rpc.Status of the grpc-status-details-bin trailer (how weft puts
// typed error details on a gRPC status), and the clients of one episode's
// host services (Model, Env, User). lib/v2.js adapts them to
// weft.plugin.v2.

const fs = require('node:fs');
const path = require('node:path');
const { grpc, protoLoader, protobuf, protoDir, localProtoDir } = require('./deps');
const { LOADER_OPTIONS } = require('./goplugin');

function protoFile(version) {
  return path.join(protoDir, 'weft', 'plugin', `v${version}`, 'plugin.proto');
}

// hasProtocol reports whether plugins/proto holds weft.plugin.v<version>.
function hasProtocol(version) {
  return fs.existsSync(protoFile(version));
}

// loadProtocol loads weft.plugin.v<version> and returns its package object
// (services as grpc-js client constructors with .service definitions).
function loadProtocol(version) {
  const def = protoLoader.loadSync(protoFile(version), { ...LOADER_OPTIONS, includeDirs: [protoDir] });
  return grpc.loadPackageDefinition(def).weft.plugin[`v${version}`];
}

// loadTypes loads weft.plugin.v<version> with protobufjs, for the messages
// that travel inside google.protobuf.Any (error details).
function loadTypes(version) {
  const root = new protobuf.Root();
  root.loadSync(protoFile(version), { keepCase: true });
  return root;
}

// google.rpc.Status and google.protobuf.Struct. protobufjs's built-in
// well-known types keep their JSON (camelCase) field names:
// Value.stringValue.
const statusRoot = new protobuf.Root();
statusRoot.loadSync(path.join(localProtoDir, 'status.proto'), { keepCase: true });
statusRoot.loadSync('google/protobuf/struct.proto', { keepCase: true });
const Status = statusRoot.lookupType('google.rpc.Status');
const Struct = statusRoot.lookupType('google.protobuf.Struct');
const DETAILS_KEY = 'grpc-status-details-bin';
const TYPE_PREFIX = 'type.googleapis.com/';

// statusError builds the error object grpc-js sends for a failed call:
// code, message and the details (protobufjs type + plain object pairs) in a
// google.rpc.Status in the grpc-status-details-bin trailer. The Status's
// code must equal the call's status code, or Go clients drop the details.
function statusError(code, message, details) {
  const st = Status.encode(Status.fromObject({
    code,
    message,
    details: details.map(([type, obj]) => ({
      type_url: TYPE_PREFIX + type.fullName.replace(/^\./, ''),
      value: type.encode(type.fromObject(obj)).finish(),
    })),
  })).finish();
  const md = new grpc.Metadata();
  md.set(DETAILS_KEY, Buffer.from(st));
  return { code, details: message, metadata: md };
}

// detailOf returns the first detail of type (a protobufjs type) on a failed
// call's error, as a plain object, or undefined.
function detailOf(err, type) {
  const url = TYPE_PREFIX + type.fullName.replace(/^\./, '');
  const bins = err && err.metadata ? err.metadata.get(DETAILS_KEY) : [];
  for (const bin of bins) {
    let st;
    try {
      st = Status.decode(Buffer.isBuffer(bin) ? bin : Buffer.from(bin));
    } catch (_) {
      continue;
    }
    for (const any of st.details || []) {
      if (any.type_url !== url) continue;
      try {
        return type.toObject(type.decode(any.value), { longs: String, enums: String });
      } catch (_) {
        // a malformed detail: look on
      }
    }
  }
  return undefined;
}

// kindOfCode is the failure kind of a gRPC status without weft's detail
// (a transport failure), as sdk/plugin decodes it.
function kindOfCode(code) {
  return {
    [grpc.status.DEADLINE_EXCEEDED]: 'deadline',
    [grpc.status.CANCELLED]: 'canceled',
    [grpc.status.UNAVAILABLE]: 'unavailable',
    [grpc.status.UNAUTHENTICATED]: 'unauthenticated',
  }[code] || 'internal';
}

// HostError is a host service's failure as the harness sees it (the model
// endpoint is down, a tool module trapped): service "model", "env" or
// "user"; kind a snake_case word ("unavailable", "trap", "deadline", ...);
// detail the host's message; failure the protocol's own failure message
// when the host sent one (v2), passed on as the episode's Failure.
class HostError extends Error {
  constructor(service, kind, detail, failure) {
    super(`host ${service} service: ${kind}: ${detail}`);
    this.service = service;
    this.kind = kind;
    this.detail = detail;
    this.failure = failure;
  }
}

// HostClients holds the clients of the host services per target
// ("127.0.0.1:PORT", "unix:/path"), created on first use.
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

// EpisodeHost is the harness's view of one episode's host services.
// clients is a HostClients entry (null: no host services, every call fails
// "unavailable"); metadata is sent on every call (v2's bearer token);
// decode(service, err) turns a failed call into a HostError. Every request
// gets the episode id; every call takes a deadline (ms since the epoch,
// Infinity = none) bounded by RunEpisode's own, and is cancelled by
// abort() (the host cancelled RunEpisode).
class EpisodeHost {
  constructor({ clients, episodeId, callDeadline, metadata, decode }) {
    this.c = clients || {};
    this.ep = episodeId;
    this.callDeadline = callDeadline;
    this.metadata = metadata || new grpc.Metadata();
    this.decode = decode;
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
        reject(new HostError(service, 'canceled', 'the host cancelled the episode'));
        return;
      }
      if (!client) {
        reject(new HostError(service, 'unavailable', 'the host offered no host services for this call'));
        return;
      }
      const opts = {};
      const dl = Math.min(deadline, this.callDeadline);
      if (Number.isFinite(dl)) opts.deadline = new Date(dl);
      const call = client[method]({ ...req, episode_id: this.ep }, this.metadata, opts, (err, resp) => {
        this.inflight.delete(call);
        if (err) reject(this.decode(service, err));
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

// deadlineOf returns a server call's deadline in ms since the epoch
// (Infinity when it has none).
function deadlineOf(call) {
  const dl = call.getDeadline();
  if (dl instanceof Date) return dl.getTime();
  return Number.isFinite(dl) ? dl : Infinity;
}

module.exports = {
  hasProtocol, loadProtocol, loadTypes, statusError, detailOf, kindOfCode, Struct,
  HostError, HostClients, EpisodeHost, deadlineOf,
};
