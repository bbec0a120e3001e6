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
venv="$CS_CACHE/venv"
if [ ! -x "$venv/bin/schemathesis" ]; then
  echo "==> installing schemathesis into $venv"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  # Debian's python3 needs python3-venv for venvs.
  python3 -m venv "$venv" 2>/dev/null || { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null && rm -rf "$venv" && python3 -m venv "$venv"; }
  "$venv/bin/pip" install -q --disable-pip-version-check "schemathesis==4.32.5"
fi
data="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
trap 'kill "$server" 2>/dev/null || true; rm -rf "$data"' EXIT
printf 'fuzz-password-123\n' | COUNTERSIGN_DATA_DIR="$data" "$bin" user add fuzzer --admin >/dev/null
token="$(COUNTERSIGN_DATA_DIR="$data" "$bin" token create --user fuzzer --name fuzz 2>/dev/null)"
COUNTERSIGN_ADDR="127.0.0.1:$port" COUNTERSIGN_DATA_DIR="$data" COUNTERSIGN_DECISIONS_PER_MINUTE=100000 RUST_LOG=error "$bin" >"$data/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
# SSE routes stream forever: they are covered by the integration tests instead.
PYTHONPATH=scripts/fuzz SCHEMATHESIS_HOOKS=hooks "$venv/bin/schemathesis" run "http://127.0.0.1:$port/api/openapi.json" \
  -H "Authorization: Bearer $token" \
  --checks not_a_server_error,status_code_conformance,response_schema_conformance,json_error_shape \
  --exclude-path-regex 'events$|/api/stream/demo' \
  --phases examples,coverage,fuzzing --max-examples "$examples" --seed 1 --no-color
if grep -q "panicked" "$data/server.log"; then echo "the server panicked:"; grep -A5 panicked "$data/server.log"; exit 1; fi
