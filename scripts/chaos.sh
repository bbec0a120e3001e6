#!/usr/bin/env bash
# The long chaos run (server/tests/api/chaos.rs) on both backends: SQLite (one process, killed and
# frozen at random) and PostgreSQL (two replicas, one with a skewed clock, killed and frozen at
# random). Prints each report line: approvals lost, duplicate effects, duplicate model steps and
# stream errors must all be 0. Usage: bash scripts/chaos.sh [CONVERSATIONS] [TURNS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/install-tools.sh --with-browser >/dev/null   # libfaketime for the skewed replica
export CHAOS_CONVERSATIONS="${1:-24}" CHAOS_TURNS="${2:-6}"
[ -n "${3:-}" ] && export CHAOS_SEED="$3"
run() { cargo test -q -p server --test api chaos:: -- --nocapture 2>&1 | grep -E "chaos harness|test result|panicked|chaos:" || true; }
echo "== SQLite"; run
eval "$(bash scripts/pg.sh start)"
trap 'bash scripts/pg.sh stop "$CS_PG_DIR"' EXIT
echo "== PostgreSQL, two replicas"; run
