#!/usr/bin/env bash
# The whole benchmark suite: release build of the site and server, then the `bench` binary in
# its own process against the release `countersign`; rewrites docs/benchmarks.md.
#   bash scripts/bench.sh            full sizes (about 5-10 minutes on 2 cores after the build)
#   bash scripts/bench.sh --quick    smoke sizes
# PostgreSQL sections run on a throwaway cluster (scripts/pg.sh: fsync off, so they measure
# locking and CPU, not the disk). An older build to compare with (ratios in the report):
#   COUNTERSIGN_BASELINE=/path/to/countersign-<commit> bash scripts/bench.sh
# (build one with `git worktree add /tmp/old <commit>` and `cargo build --release -p server
# --bin countersign --no-default-features` there, copy target/release/countersign, remove the
# worktree and run `cargo clean --release -p app -p domain -p engine -p server`: cargo would otherwise take the old
# worktree's crates for up to date here).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/env.sh
bash scripts/install-tools.sh
echo "[bench] release build (the first one takes several minutes)"
bash scripts/build-site.sh --release
cargo build --release -p bench
# Thousands of SSE clients need as many file descriptors.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true
eval "$(bash scripts/pg.sh start)"
trap 'bash scripts/pg.sh stop "$CS_PG_DIR"' EXIT
baseline=()
[ -n "${COUNTERSIGN_BASELINE:-}" ] && baseline=(--baseline-server "$COUNTERSIGN_BASELINE")
"$CARGO_TARGET_DIR/release/bench" --server "$CARGO_TARGET_DIR/release/countersign" \
  --site-root "$CARGO_TARGET_DIR/site" --postgres "$COUNTERSIGN_TEST_POSTGRES" "${baseline[@]}" \
  --write docs/benchmarks.md "$@"
# 8. First paint on a slow link: Chromium (through Playwright) on the same release build.
first_paint="$(mktemp)"
(cd end2end && COUNTERSIGN_BIN="$CARGO_TARGET_DIR/release/countersign" COUNTERSIGN_SITE_ROOT="$CARGO_TARGET_DIR/site" \
  FIRST_PAINT_REPORT="$first_paint" npx playwright test --config measure.config.ts)
if [[ " $* " != *" --quick "* ]]; then
  { echo; cat "$first_paint"; } >> docs/benchmarks.md
fi
rm -f "$first_paint"
