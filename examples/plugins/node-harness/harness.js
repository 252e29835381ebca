#!/usr/bin/env node
'use strict';
// node-harness: a weft harness plugin in Node.js. weft starts it (go-plugin
// handshake, then gRPC); see README.md and docs/plugins-other-languages.md.
// It speaks weft.plugin.v2 (plugins/proto/weft/plugin/v2/plugin.proto,
// loaded at run time).

const { serve, log } = require('./lib/goplugin');
const harness = require('./lib/harness');

// Protocol versions served: go-plugin version -> registration of the
// weft services. A later version is added here beside its adapter.
const versions = {
  2: (server, ctx) => require('./lib/v2').register(server, ctx, harness),
};

serve({ name: harness.NAME, versions }).catch((err) => {
  log('error', 'plugin failed to start', { error: err.message });
  process.stderr.write(`${harness.NAME}: ${err.stack || err}\n`);
  process.exit(1);
});
