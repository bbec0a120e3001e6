#!/usr/bin/env bash
# Builds Countersign in release mode and serves it (default http://127.0.0.1:3000).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/env.sh
bash scripts/install-tools.sh
echo "[run] building (release; the first build takes several minutes) ..."
bash scripts/build-site.sh --release
# Demo accounts (documented in the README): demo / demo-password and admin / admin-password.
export COUNTERSIGN_DEMO_ACCOUNTS="${COUNTERSIGN_DEMO_ACCOUNTS:-1}"
export COUNTERSIGN_SITE_ROOT="${COUNTERSIGN_SITE_ROOT:-$CARGO_TARGET_DIR/site}"
exec "$CARGO_TARGET_DIR/release/countersign" "$@"
