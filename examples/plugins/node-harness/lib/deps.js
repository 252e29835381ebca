'use strict';
// Finds the npm dependencies (@grpc/grpc-js, @grpc/proto-loader,
// protobufjs) and the weft protocol files without an install step inside
// the source tree: install.sh puts node_modules under the repository's
// build/node-harness (ignored by git). Looked up in order:
//
//   $WEFT_NODE_HARNESS_MODULES    a node_modules folder
//   <this folder>/../node_modules (npm ci run in the example folder itself)
//   <repo>/build/node-harness/node_modules
//
// The .proto files come from $WEFT_PLUGIN_PROTO_DIR, else <repo>/plugins/proto.

const fs = require('node:fs');
const path = require('node:path');
const { createRequire } = require('node:module');

const here = path.resolve(__dirname, '..');
const repo = path.resolve(here, '..', '..', '..');

function modulesDir() {
  const candidates = [
    process.env.WEFT_NODE_HARNESS_MODULES,
    path.join(here, 'node_modules'),
    path.join(repo, 'build', 'node-harness', 'node_modules'),
  ].filter(Boolean);
  for (const dir of candidates) {
    if (fs.existsSync(path.join(dir, '@grpc', 'grpc-js'))) return dir;
  }
  throw new Error(
    'node-harness: @grpc/grpc-js is not installed; looked in ' + candidates.join(', ') +
      ' (run examples/plugins/node-harness/install.sh, or set WEFT_NODE_HARNESS_MODULES)');
}

const req = createRequire(path.join(modulesDir(), 'weft-node-harness.js'));

module.exports = {
  grpc: req('@grpc/grpc-js'),
  protoLoader: req('@grpc/proto-loader'),
  protobuf: req('protobufjs'),
  // Folder of weft's .proto files (weft/plugin/v2/plugin.proto, ...).
  protoDir: process.env.WEFT_PLUGIN_PROTO_DIR || path.join(repo, 'plugins', 'proto'),
  // Folder of this example's own .proto files (go-plugin's services,
  // grpc.health.v1, google.rpc.Status).
  localProtoDir: path.join(here, 'proto'),
};
