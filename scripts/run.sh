#!/usr/bin/env bash
# Builds Countersign in release mode and serves it (default http://127.0.0.1:3000).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/env.sh
# The server's release build needs nothing but cargo, so it starts at once, in the background,
# while the tools install and the WASM builds: on 2 cores each fills the other's idle time
# (README, "first run"). Its output goes to a log, shown if it fails.
mkdir -p "$CARGO_TARGET_DIR"
server_log="$CARGO_TARGET_DIR/server-build.log"
echo "[run] building (release; the first build takes about 15 minutes, later ones seconds) ..."
echo "[run] the server builds in the background; its output: $server_log"
bash scripts/build-site.sh --release --server-only >"$server_log" 2>&1 &
server_build=$!
trap 'pkill -P "$server_build" 2>/dev/null; kill "$server_build" 2>/dev/null || true' EXIT
bash scripts/install-tools.sh
bash scripts/build-site.sh --release --site-only
echo "[run] waiting for the server build"
if ! wait "$server_build"; then
  cat "$server_log" >&2
  echo "[run] the server build failed (above)" >&2
  exit 1
fi
trap - EXIT
# Demo accounts (documented in the README): demo / demo-password and admin / admin-password.
export COUNTERSIGN_DEMO_ACCOUNTS="${COUNTERSIGN_DEMO_ACCOUNTS:-1}"
export COUNTERSIGN_SITE_ROOT="${COUNTERSIGN_SITE_ROOT:-$CARGO_TARGET_DIR/site}"
exec "$CARGO_TARGET_DIR/release/countersign" "$@"
