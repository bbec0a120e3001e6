#!/usr/bin/env bash
# API fuzzing from the OpenAPI document (schemathesis from PyPI) against a running server on a
# fresh database: no 5xx, every status documented, responses match their schemas, and every
# error in the JSON error shape. Usage: bash scripts/fuzz.sh [BINARY] [MAX_EXAMPLES]
# With DATABASE_URL set (e.g. an empty PostgreSQL database) the server and the CLI use it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bin="${1:-$CARGO_TARGET_DIR/debug/countersign}"
examples="${2:-${FUZZ_EXAMPLES:-25}}"
venv="$(dirname "$(dirname "$(bash scripts/python-tools.sh)")")"
data="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
trap 'kill "$server" 2>/dev/null || true; rm -rf "$data"' EXIT
printf 'fuzz-password-123\n' | COUNTERSIGN_DATA_DIR="$data" "$bin" user add fuzzer --admin >/dev/null
printf 'fuzz-password-456\n' | COUNTERSIGN_DATA_DIR="$data" "$bin" user add fuzzuser >/dev/null
COUNTERSIGN_ADDR="127.0.0.1:$port" COUNTERSIGN_DATA_DIR="$data" COUNTERSIGN_DECISIONS_PER_MINUTE=100000 RUST_LOG=error "$bin" >"$data/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done

# One run per role, each on fresh things of its own (seed.py) so every `{id}` operation reaches
# real data: the user with an API token, the admin with a session cookie (a token cannot make
# tokens). As a user the admin-only operations must refuse (hooks.py); an admin run in which an
# operation only ever got 401/403, or only 404, fails: it never got past the door.
fuzz_as() {
  local role="$1" name="$2" password="$3" auth="$4" fail_on="$5" config="$data/schemathesis-$1.toml"
  python3 scripts/fuzz/seed.py "http://127.0.0.1:$port" "$name" "$password" "$auth" "$fail_on" >"$config"
  echo "==> fuzzing as $role ($auth)"
  # SSE routes stream forever: they are covered by the integration tests instead.
  FUZZ_AS="$role" PYTHONPATH=scripts/fuzz SCHEMATHESIS_HOOKS=hooks "$venv/bin/schemathesis" --config-file "$config" \
    run "http://127.0.0.1:$port/api/openapi.json" \
    --checks not_a_server_error,status_code_conformance,response_schema_conformance,json_error_shape,admin_only_refuses_users \
    --exclude-path-regex 'events$' \
    --phases examples,coverage,fuzzing --max-examples "$examples" --seed 1 --no-color
}
# As a user the admin-only operations (and token-making with a token) answer only 403: the point.
fuzz_as user fuzzuser fuzz-password-456 token missing_test_data
fuzz_as admin fuzzer fuzz-password-123 session missing_auth,missing_test_data
if grep -q "panicked" "$data/server.log"; then echo "the server panicked:"; grep -A5 panicked "$data/server.log"; exit 1; fi
