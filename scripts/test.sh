#!/usr/bin/env bash
# Runs every check and test: formatting and clippy, Rust unit, property and integration tests
# (crash harness and races included) on SQLite and on PostgreSQL, API fuzzing (schemathesis),
# then the Playwright suite in Debian chromium against a debug build of the site (each test
# worker starts its own server on a free port), then the release build with a benchmark smoke run.
# Every Rust test has a time limit (.config/nextest.toml), so a hang fails with its name.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"
. scripts/env.sh
bash scripts/install-tools.sh --with-browser

echo "[test] formatting (cargo fmt --check) and lints (clippy, warnings are errors)"
cargo fmt --all --check
cargo clippy -q -p app -p bench -p clock -p domain -p engine -p server -p store --all-targets -- -D warnings
cargo clippy -q -p frontend --target wasm32-unknown-unknown --target-dir "$CARGO_TARGET_DIR/front" -- -D warnings

# The email tests send to a real SMTP server (aiosmtpd) and the A2A tests drive a2a-sdk's client
# (both from PyPI).
COUNTERSIGN_TEST_PYTHON="$(bash scripts/python-tools.sh)"
COUNTERSIGN_TEST_PYTHON_A2A_03="$(bash scripts/python-tools.sh --a2a-0.3)"
export COUNTERSIGN_TEST_PYTHON COUNTERSIGN_TEST_PYTHON_A2A_03

echo "[test] unit and integration tests"
cargo nextest run --no-fail-fast -p app -p clock -p domain -p engine -p server -p store

echo "[test] the integration suite again on PostgreSQL (a throwaway cluster from Debian's packages)"
eval "$(bash scripts/pg.sh start)"
# An absolute path: the trap may run after a later `cd end2end` (a failing e2e run).
trap 'bash "$root/scripts/pg.sh" stop "$CS_PG_DIR"' EXIT
cargo nextest run --no-fail-fast -p server --test api
cargo nextest run --no-fail-fast -p engine --test use_cases

echo "[test] API fuzzing from the OpenAPI document (schemathesis), on SQLite and on PostgreSQL"
bash scripts/fuzz.sh "$CARGO_TARGET_DIR/debug/countersign"
DATABASE_URL="$(bash scripts/pg.sh createdb fuzz)" bash scripts/fuzz.sh "$CARGO_TARGET_DIR/debug/countersign"
pg_server="$COUNTERSIGN_TEST_POSTGRES"
unset COUNTERSIGN_TEST_POSTGRES

echo "[test] building the site (debug) for the end-to-end tests"
bash scripts/build-site.sh

echo "[test] end-to-end tests (Playwright, Debian chromium)"
cd end2end
COUNTERSIGN_BIN="$CARGO_TARGET_DIR/debug/countersign" \
COUNTERSIGN_SITE_ROOT="$CARGO_TARGET_DIR/site-debug" \
  npx playwright test

# The release build is what `./x run` serves; building it here keeps that command working.
echo "[test] release build and a benchmark smoke run against it (quick sizes, no timing assertions)"
cd ..
bash scripts/build-site.sh --release
cargo build --release -p bench
"$CARGO_TARGET_DIR/release/bench" --quick --server "$CARGO_TARGET_DIR/release/countersign" --site-root "$CARGO_TARGET_DIR/site" \
  --postgres "$pg_server"
# The first-paint measurement on the release site (throttled Chromium; it also shows the
# precompressed bundle is served and hydrates). Its numbers are written only by scripts/bench.sh.
(cd end2end && COUNTERSIGN_BIN="$CARGO_TARGET_DIR/release/countersign" COUNTERSIGN_SITE_ROOT="$CARGO_TARGET_DIR/site" \
  npx playwright test --config measure.config.ts)
