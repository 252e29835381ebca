#!/usr/bin/env bash
# scripts/oracle-test.sh [--native] DOMAIN CASES_FILE
#
# Replays a cases file of the shared oracle format (docs/module-test.md:
# {"cases": [{"id", "calls": [{"name", "arguments", "error", "output"}],
# "final_changes"}]}) against one domain's tool backend, from a clean clone:
# it builds what the domain needs (bin/weft, the interpreter module or the
# module bundle in a private registry under build/) and ends with the line
# "N passed, M failed"; the exit status is non-zero on any failed case or
# any error.
#
# DOMAIN:
#   retail   the hand-written Go module examples/modules/retail (compiled to
#            wasm, run by `weft module test`)
#   retail-c the same domain as the C module examples/modules/retail-c
#            (built with its Makefile: clang, lld, wasi-libc), run by
#            `weft module test` on the same schema and seed
#   retail-spec
#            the tau2 retail domain re-expressed in the synthesized-server
#            format, examples/servers/tau2-retail, run by `weft module test`
#            on the shared wasm interpreter (weft-interp, stored by make
#            build), each tool under its declared table policy
#   airline  the tau2 airline domain in the synthesized-server format,
#            examples/servers/tau2-airline, the same way
#   bfcl     the BFCL v4 multi-turn domain (its 8 API classes),
#            the Go module examples/modules/bfcl run natively
#            (module.NewNative; the Go test TestOracleCases in that folder):
#            every case carries its own initial_config, which seeds the
#            module's bfcl_class table (and GorillaFileSystem's tree as
#            workspace files) before the case runs
#
# --native runs a synthesized server's cases with module.NewNativeServer
# instead (the interpreter's Go code, not compiled to wasm: the Go test
# TestOracleCases of the server's folder), for debugging a program; the
# wasm interpreter is the default and what make module-test runs.
#
# Examples:
#   scripts/oracle-test.sh retail examples/data/tau2-retail/oracle/fuzz-public.json
#   scripts/oracle-test.sh retail-spec examples/data/tau2-retail/oracle/tasks-train.json
#   scripts/oracle-test.sh airline examples/data/tau2-airline/oracle/tasks-train.json
#   scripts/oracle-test.sh bfcl examples/data/bfcl-multiturn/oracle/fuzz-public.json
#   scripts/oracle-test.sh --native airline examples/data/tau2-airline/oracle/fuzz-public.json
set -euo pipefail

usage() {
	echo "usage: scripts/oracle-test.sh [--native] DOMAIN CASES_FILE   (DOMAIN: retail, retail-c, retail-spec, airline, bfcl)" >&2
	exit 2
}
native=0
if [ "${1:-}" = --native ]; then
	native=1
	shift
fi
[ $# -eq 2 ] || usage
domain=$1
cases=$2
if [ ! -f "$cases" ]; then
	echo "oracle-test: cases file $cases does not exist" >&2
	exit 2
fi
cases=$(cd "$(dirname "$cases")" && pwd)/$(basename "$cases")
cd "$(dirname "$0")/.."
root=$PWD
GO=${GO:-go}
export WEFT_REGISTRY=$root/build/registry
cache=(--cache-dir "$root/build/wazero")

# go_oracle PKG: replays $cases with the Go test TestOracleCases of PKG (a
# synthesized server's folder, run natively: --native), printing mismatches
# and then its summary line; exits non-zero on any failure.
go_oracle() {
	log=$(mktemp)
	trap 'rm -f "$log"' EXIT
	set +e
	$GO test -count=1 -timeout 30m -run '^TestOracleCases$' -v "$1" -args -cases "$cases" >"$log" 2>&1
	rc=$?
	set -e
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1 || true)
	# Mismatches (t.Error lines) and any build or harness error, then the
	# summary line last.
	grep -vE '^(=== RUN|--- (PASS|FAIL|SKIP)|PASS$|FAIL$|ok |FAIL	)|^[0-9]+ passed, [0-9]+ failed$' "$log" || true
	if [ -z "$summary" ]; then
		echo "oracle-test: the $domain test produced no summary (exit $rc)" >&2
		exit 1
	fi
	echo "$summary"
	failed=${summary#*passed, }
	failed=${failed% failed}
	if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ]; then
		exit 1
	fi
}

case $domain in
retail)
	make --no-print-directory build >&2
	bin/weft module build ./examples/modules/retail "${cache[@]}" \
		--schema examples/modules/retail/retaildb/schema.sql \
		--seed examples/data/tau2-retail/db.state.json >&2
	exec bin/weft module test retail "${cache[@]}" --cases "$cases"
	;;
retail-c)
	make --no-print-directory build >&2
	make --no-print-directory -C examples/modules/retail-c >&2
	bin/weft module build ./examples/modules/retail-c "${cache[@]}" \
		--wasm examples/modules/retail-c/retail.wasm \
		--schema examples/modules/retail/retaildb/schema.sql \
		--seed examples/data/tau2-retail/db.state.json >&2
	exec bin/weft module test retail-c "${cache[@]}" --cases "$cases"
	;;
retail-spec | airline)
	dir=./examples/servers/tau2-retail
	[ "$domain" = airline ] && dir=./examples/servers/tau2-airline
	if [ "$native" -eq 1 ]; then
		go_oracle "$dir"
		exit
	fi
	# make build stores the interpreter module (weft-interp) in
	# $WEFT_REGISTRY; weft module test bundles the spec directory against it.
	make --no-print-directory build >&2
	exec bin/weft module test "$dir" "${cache[@]}" --cases "$cases"
	;;
bfcl)
	go_oracle ./examples/modules/bfcl
	;;
*)
	echo "oracle-test: unknown domain $domain (retail, retail-c, retail-spec, airline, bfcl)" >&2
	usage
	;;
esac
