#!/usr/bin/env bash
# Runs the MySQL inspection server against Debian's MariaDB command-line
# client (package mariadb-client: apt-get install -y mariadb-client). Unlike
# `go test ./...`, which skips that test when the client is missing, this
# fails then, so CI cannot silently lose it.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mariadb >/dev/null; then
	echo "test-mysql-inspect: the mariadb client is missing (apt-get install -y mariadb-client)" >&2
	exit 1
fi
mariadb --version
WEFT_REQUIRE_MARIADB=1 exec go test -race -count=1 -run 'TestMySQLServerMariaDBClient' -v ./megamcp/inspect/
