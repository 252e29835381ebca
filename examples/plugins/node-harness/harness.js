#!/usr/bin/env node
'use strict';
// node-harness: a weft harness plugin in Node.js. weft starts it (go-plugin
// handshake, then gRPC); see README.md and docs/plugins-other-languages.md.

const { serve, log } = require('./lib/goplugin');
const { loadProtocol, pluginError, HostClients, EpisodeHost } = require('./lib/weft');
const { NAME, describe, runEpisode } = require('./lib/harness');

// register serves weft.plugin.v1's Harness service. The host services of a
// RunEpisode are on the go-plugin broker connection host_broker_id (0 =
// none).
function registerV1(server, ctx) {
  const pkg = loadProtocol(1);
  const clients = new HostClients(pkg, ctx.channelOptions);
  server.addService(pkg.Harness.service, {
    Describe(call, cb) {
      cb(null, describe());
    },
    RunEpisode(call, cb) {
      const req = call.request;
      const id = Number(req.host_broker_id || 0);
      const target = id === 0 ? Promise.resolve(null) : ctx.broker.target(id);
      episode(call, cb, target.then((t) => (t === null ? null : clients.get(t))));
    },
  });
}

// episode runs one RunEpisode call with the host services clients resolve
// to; a cancelled call aborts the episode's host calls.
function episode(call, cb, clients) {
  const req = call.request;
  const dl = call.getDeadline();
  const callDeadline = dl instanceof Date ? dl.getTime() : Number.isFinite(dl) ? dl : Infinity;
  clients
    .then((c) => {
      const host = new EpisodeHost(c, req.episode_id || '', callDeadline);
      call.on('cancelled', () => host.abort());
      return runEpisode(req, host);
    })
    .then(
      (resp) => cb(null, resp),
      (err) => {
        log('debug', 'RunEpisode failed', { episode_id: req.episode_id || '', error: err.message });
        cb(pluginError(err));
      });
}

serve({ name: NAME, versions: { 1: registerV1 } }).catch((err) => {
  log('error', 'plugin failed to start', { error: err.message });
  process.stderr.write(`${NAME}: ${err.stack || err}\n`);
  process.exit(1);
});
