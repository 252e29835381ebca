#!/usr/bin/env bash
# scripts/oracle-test.sh DOMAIN CASES_FILE
#
# Replays a cases file of the shared oracle format (docs/module-test.md:
# {"cases": [{"id", "calls": [{"name", "arguments", "error", "output"}],
# "final_changes"}]}) against one domain's tool backend, from a clean clone:
# it builds what the domain needs (bin/weft, the module bundle in a private
# registry under build/) and ends with the line "N passed, M failed"; the
# exit status is non-zero on any failed case or any error.
#
# DOMAIN:
#   retail   the hand-written Go module examples/modules/retail (compiled to
#            wasm, run by `weft module test`)
#   airline  the tau2 airline domain in the synthesized-server format,
#            examples/servers/tau2-airline, served by module.NewNativeServer
#            on the shared interpreter's Go code (the Go test TestOracleCases
#            in that folder). `weft module test examples/servers/tau2-airline
#            --cases FILE` runs the same spec on the wasm interpreter module,
#            but its whole-state export (9,000 flight dates, 2,000
#            reservations, after every changed case) overran the 1-minute
#            export deadline on a loaded 2-core machine, so this script keeps
#            the native path.
#
# Examples:
#   scripts/oracle-test.sh retail examples/data/tau2-retail/oracle/fuzz-public.json
#   scripts/oracle-test.sh airline examples/data/tau2-airline/oracle/tasks-train.json
set -euo pipefail

usage() {
	echo "usage: scripts/oracle-test.sh DOMAIN CASES_FILE   (DOMAIN: retail, airline)" >&2
	exit 2
}
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

case $domain in
retail)
	make --no-print-directory build >&2
	bin/weft module build ./examples/modules/retail "${cache[@]}" \
		--schema examples/modules/retail/retaildb/schema.sql \
		--seed examples/data/tau2-retail/db.state.json >&2
	exec bin/weft module test retail "${cache[@]}" --cases "$cases"
	;;
airline)
	log=$(mktemp)
	trap 'rm -f "$log"' EXIT
	set +e
	$GO test -count=1 -timeout 30m -run '^TestOracleCases$' -v ./examples/servers/tau2-airline -args -cases "$cases" >"$log" 2>&1
	rc=$?
	set -e
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1 || true)
	# Mismatches (t.Error lines) and any build or harness error, then the
	# summary line last.
	grep -vE '^(=== RUN|--- (PASS|FAIL|SKIP)|PASS$|FAIL$|ok |FAIL	)|^[0-9]+ passed, [0-9]+ failed$' "$log" || true
	if [ -z "$summary" ]; then
		echo "oracle-test: the airline test produced no summary (exit $rc)" >&2
		exit 1
	fi
	echo "$summary"
	failed=${summary#*passed, }
	failed=${failed% failed}
	if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ]; then
		exit 1
	fi
	;;
*)
	echo "oracle-test: unknown domain $domain (retail, airline)" >&2
	usage
	;;
esac
