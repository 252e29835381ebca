'use strict';
// weft.plugin.v1 (go-plugin protocol version 1): settings and the
// settings schema are JSON text; the host services are on a go-plugin
// broker connection (RunEpisodeRequest.host_broker_id, announced on the
// GRPCBroker stream); errors carry a google.protobuf.Struct detail
// {"weft_error": "host_error", "service", "kind"} or {"weft_error":
// "plugin_error"} (sdk/plugin/status.go of v1).

const { grpc } = require('./deps');
const { loadProtocol, statusError, detailOf, kindOfCode, Struct, HostError, HostClients, EpisodeHost, deadlineOf } = require('./weft');

function structFields(fields) {
  return { fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { stringValue: v }])) };
}

function decode(service, err) {
  const s = detailOf(err, Struct);
  const f = s && s.fields ? Object.fromEntries(Object.entries(s.fields).map(([k, v]) => [k, v.stringValue])) : {};
  const message = err.details || err.message || String(err);
  if (f.weft_error === 'host_error') return new HostError(f.service || service, f.kind || 'internal', message);
  return new HostError(service, kindOfCode(err.code), message);
}

// pluginError encodes a RunEpisode error (refused settings, a bad
// history): status UNKNOWN with detail {"weft_error": "plugin_error"}; the
// host reports a PluginError of kind "error" with the message.
function pluginError(err) {
  return statusError(grpc.status.UNKNOWN, err.message || String(err), [[Struct, structFields({ weft_error: 'plugin_error' })]]);
}

// register serves weft.plugin.v1.Harness with h ({describe, runEpisode}).
function register(server, ctx, h) {
  const pkg = loadProtocol(1);
  const clients = new HostClients(pkg, ctx.channelOptions);
  server.addService(pkg.Harness.service, {
    Describe(call, cb) {
      const d = h.describe();
      cb(null, { ...d, settings_schema: JSON.stringify(d.settings_schema) });
    },
    RunEpisode(call, cb) {
      const req = call.request;
      const id = Number(req.host_broker_id || 0);
      const fail = (err) => {
        ctx.log('debug', 'RunEpisode failed', { episode_id: req.episode_id || '', error: err.message });
        cb(pluginError(err));
      };
      (id === 0 ? Promise.resolve(null) : ctx.broker.target(id))
        .then((target) => {
          const host = new EpisodeHost({
            clients: target === null ? null : clients.get(target),
            episodeId: req.episode_id || '',
            callDeadline: deadlineOf(call),
            decode,
          });
          call.on('cancelled', () => host.abort());
          let settings;
          if (req.settings) {
            try {
              settings = JSON.parse(req.settings);
            } catch (e) {
              throw new Error(`${h.NAME} settings: not JSON: ${e.message}`);
            }
          }
          return h.runEpisode({ ...req, settings }, host);
        })
        .then(({ trajectory, hostError }) => {
          const resp = { trajectory };
          if (hostError) resp.failure = { kind: `${hostError.service}_${hostError.kind}`, message: hostError.detail };
          cb(null, resp);
        }, fail);
    },
  });
}

module.exports = { register, decode, pluginError };
