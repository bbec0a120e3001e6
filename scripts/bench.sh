#!/usr/bin/env bash
# The whole benchmark suite: release build of the site and server, then the `bench` binary in
# its own process against the release `countersign`; rewrites docs/benchmarks.md.
#   bash scripts/bench.sh            full sizes (about 5-10 minutes on 2 cores after the build)
#   bash scripts/bench.sh --quick    smoke sizes
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/env.sh
bash scripts/install-tools.sh
echo "[bench] release build (the first one takes several minutes)"
bash scripts/build-site.sh --release
cargo build --release -p server --bin bench
# Thousands of SSE clients need as many file descriptors.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true
"$CARGO_TARGET_DIR/release/bench" --server "$CARGO_TARGET_DIR/release/countersign" \
  --site-root "$CARGO_TARGET_DIR/site" --write docs/benchmarks.md "$@"
