#!/usr/bin/env bash
# The long crash run: N cycles (default 200) of chat → approval → decision against the real binary,
# SIGKILLed at random points and restarted. Prints the report line (approvals lost, duplicate
# effects, external calls reported interrupted). Usage: bash scripts/crash.sh [N] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/install-tools.sh --with-browser >/dev/null   # the MCP server comes from end2end's npm packages
export CRASH_CYCLES="${1:-200}"
[ -n "${2:-}" ] && export CRASH_SEED="$2"
cargo test -p server --test api crash::sigkill -- --nocapture 2>&1 | grep -E "crash harness|test result|panicked"
