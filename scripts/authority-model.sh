#!/usr/bin/env bash
# Runs the model-based authority test (server/tests/api/authority_model.rs) for longer than
# `./x test` does: ROUNDS rounds (default 40) of 150 generated cases, each from a random seed that
# is printed first with the steps it ran, so a failure can be run again with
#   COUNTERSIGN_MODEL_SEED=<seed> COUNTERSIGN_MODEL_CASES=150 cargo nextest run -p server --test api authority_model
# With DATABASE_URL unset it runs on SQLite; with COUNTERSIGN_TEST_POSTGRES set, on PostgreSQL.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/env.sh
rounds="${1:-40}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for round in $(seq 1 "$rounds"); do
  seed="$(python3 -c 'import random; print(random.getrandbits(48))')"
  echo "[authority-model] round $round/$rounds: 150 cases, seed $seed"
  status=0
  COUNTERSIGN_MODEL_CASES=150 COUNTERSIGN_MODEL_SEED="$seed" \
    cargo nextest run --profile model-long --cargo-quiet --no-capture -p server --test api -E 'test(/authority_model::/)' >"$log" 2>&1 || status=$?
  grep -E '^authority model:|disagrees|minimal failing' "$log" || true
  [ "$status" -eq 0 ] || { cat "$log" >&2; echo "[authority-model] failed with seed $seed" >&2; exit 1; }
done
echo "[authority-model] $rounds rounds passed"
