'use strict';
// weft.plugin.v2 (go-plugin protocol version 2): settings and the settings
// schema are weft.plugin.v2.Value objects; the host services of a call are
// at RunEpisodeRequest.host.address (plaintext gRPC on loopback) with the
// metadata "authorization: Bearer <host.token>" on every call; a host
// failure arrives as a gRPC status whose details hold a
// weft.plugin.v2.Failure {component, kind, message}, and the harness passes
// it on as its response's failure.

const { grpc } = require('./deps');
const { loadProtocol, loadTypes, statusError, detailOf, kindOfCode, HostError, HostClients, EpisodeHost, deadlineOf } = require('./weft');
const { toValue, fromValue } = require('./value');

const SERVICES = { COMPONENT_MODEL: 'model', COMPONENT_ENV: 'env', COMPONENT_USER: 'user', COMPONENT_STATE: 'state' };
const lower = (enumName, prefix) => String(enumName || '').replace(prefix, '').toLowerCase();

// target turns HostAccess.address into a grpc-js target.
function target(address) {
  if (address.startsWith('unix://')) return 'unix:' + address.slice('unix://'.length);
  return address;
}

function adapter() {
  const types = loadTypes(2);
  const Failure = types.lookupType('weft.plugin.v2.Failure');

  function decode(service, err) {
    const message = err.details || err.message || String(err);
    const f = detailOf(err, Failure);
    if (f) {
      const failure = { component: f.component || 'COMPONENT_UNSPECIFIED', kind: f.kind || 'FAILURE_KIND_UNSPECIFIED', message: f.message || message };
      return new HostError(SERVICES[failure.component] || service, lower(failure.kind, 'FAILURE_KIND_'), failure.message, failure);
    }
    return new HostError(service, kindOfCode(err.code), message);
  }

  // failureOf is the response's Failure for the host failure that ended the
  // episode: the host's own Failure when it sent one, else one built from
  // the service and the transport's kind.
  function failureOf(he) {
    if (he.failure) return he.failure;
    return { component: 'COMPONENT_' + he.service.toUpperCase(), kind: 'FAILURE_KIND_' + he.kind.toUpperCase(), message: he.detail };
  }

  // pluginError encodes RunEpisode's own error (refused settings, a bad
  // history): status UNKNOWN with a Failure {COMPONENT_PLUGIN,
  // FAILURE_KIND_ERROR} detail.
  function pluginError(err) {
    const message = err.message || String(err);
    return statusError(grpc.status.UNKNOWN, message, [[Failure, { component: 'COMPONENT_PLUGIN', kind: 'FAILURE_KIND_ERROR', message }]]);
  }

  return { decode, failureOf, pluginError };
}

// register serves weft.plugin.v2.Harness with h ({describe, runEpisode}).
function register(server, ctx, h) {
  const pkg = loadProtocol(2);
  const a = adapter();
  const clients = new HostClients(pkg, ctx.channelOptions);
  server.addService(pkg.Harness.service, {
    Describe(call, cb) {
      const d = h.describe();
      cb(null, { ...d, settings_schema: toValue(d.settings_schema) });
    },
    RunEpisode(call, cb) {
      const req = call.request;
      const access = req.host || {};
      const md = new grpc.Metadata();
      if (access.token) md.set('authorization', 'Bearer ' + access.token);
      const host = new EpisodeHost({
        clients: access.address ? clients.get(target(access.address)) : null,
        episodeId: req.episode_id || '',
        callDeadline: deadlineOf(call),
        metadata: md,
        decode: a.decode,
      });
      call.on('cancelled', () => host.abort());
      Promise.resolve()
        .then(() => h.runEpisode({ ...req, settings: fromValue(req.settings) }, host))
        .then(({ trajectory, hostError }) => {
          const resp = { trajectory };
          if (hostError) resp.failure = a.failureOf(hostError);
          cb(null, resp);
        }, (err) => {
          ctx.log('debug', 'RunEpisode failed', { episode_id: req.episode_id || '', error: err.message });
          cb(a.pluginError(err));
        });
    },
  });
}

module.exports = { register, adapter, target };
