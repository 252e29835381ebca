#!/usr/bin/env node
'use strict';
// node-harness: a weft harness plugin in Node.js. weft starts it (go-plugin
// handshake, then gRPC); see README.md and docs/plugins-other-languages.md.
// It speaks every weft plugin protocol version whose plugin.proto is in
// plugins/proto (v1, v2), the highest one the host offers.

const { serve, log } = require('./lib/goplugin');
const { hasProtocol } = require('./lib/weft');
const harness = require('./lib/harness');

const versions = {};
for (const [v, mod] of [[1, './lib/v1'], [2, './lib/v2']]) {
  if (hasProtocol(v)) versions[v] = (server, ctx) => require(mod).register(server, ctx, harness);
}

serve({ name: harness.NAME, versions }).catch((err) => {
  log('error', 'plugin failed to start', { error: err.message });
  process.stderr.write(`${harness.NAME}: ${err.stack || err}\n`);
  process.exit(1);
});
