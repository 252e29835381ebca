#!/usr/bin/env bash
# Installs node-harness's npm dependencies (@grpc/grpc-js,
# @grpc/proto-loader, protobufjs) at the versions package-lock.json pins,
# with `npm ci`, into <repo>/build/node-harness/node_modules (ignored by
# git), where lib/deps.js finds them. Does nothing when that install is
# already from the current package.json and lock (a stamp file says so).
# Downloads go through the npm cache build/npm-cache (--prefer-offline:
# a second install needs no network). Needs npm; the plugin needs node >= 20.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
dest=$root/build/node-harness
stamp=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)
if [[ "$(cat "$dest/.installed" 2>/dev/null || true)" == "$stamp" ]]; then
	exit 0
fi
command -v npm >/dev/null || { echo "node-harness: npm is missing (Debian: apt-get install npm)" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$dest"
cp "$here/package.json" "$here/package-lock.json" "$here/.npmrc" "$dest/"
# --ignore-scripts: none of the dependencies needs an install script.
(cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --prefer-offline --cache "$root/build/npm-cache")
echo "$stamp" >"$dest/.installed"
