#!/usr/bin/env bash
# PostgreSQL for the leaderboard tests (tests/e2e/test_leaderboard_db.py): installs Debian's
# postgresql if missing and runs a cluster of its own, "dce", on 127.0.0.1:54329 (a port of
# its own, so it never clashes with a system cluster), with a login role and database
# dce_test (password dce_test; the role may create the per-test databases). Idempotent:
# rerunning it changes nothing. It exports nothing; the tests look for
#   postgresql://dce_test:dce_test@127.0.0.1:54329/dce_test   (DCE_TEST_DATABASE_URL overrides)
set -euo pipefail

PORT=54329
CLUSTER=dce

if ! command -v pg_createcluster >/dev/null || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql
fi
VERSION=$(ls /usr/lib/postgresql | sort -V | tail -1)

if ! pg_lsclusters -h | awk -v c="$CLUSTER" '$2 == c {found=1} END {exit !found}'; then
    pg_createcluster "$VERSION" "$CLUSTER" --port "$PORT" -- --auth-host=scram-sha-256 --auth-local=peer
fi
echo "listen_addresses = '127.0.0.1'" >"/etc/postgresql/$VERSION/$CLUSTER/conf.d/listen.conf"
if ! pg_lsclusters -h | awk -v c="$CLUSTER" '$2 == c && $4 == "online" {found=1} END {exit !found}'; then
    pg_ctlcluster "$VERSION" "$CLUSTER" start
fi

as_postgres() { runuser -u postgres -- psql -p "$PORT" -v ON_ERROR_STOP=1 -tAc "$1"; }
if [ "$(as_postgres "SELECT 1 FROM pg_roles WHERE rolname = 'dce_test'")" != "1" ]; then
    as_postgres "CREATE ROLE dce_test LOGIN CREATEDB PASSWORD 'dce_test'"
fi
if [ "$(as_postgres "SELECT 1 FROM pg_database WHERE datname = 'dce_test'")" != "1" ]; then
    as_postgres "CREATE DATABASE dce_test OWNER dce_test"
fi
echo "PostgreSQL $VERSION cluster $CLUSTER on 127.0.0.1:$PORT, database dce_test"
