#!/usr/bin/env bash
# Installs what building, running and testing Countersign needs, skipping what is already there.
#   wasm32 target, cargo-leptos (no_downloads), wasm-bindgen CLI (= the version in Cargo.lock),
#   wasm-opt (npm binaryen, never Debian's), Debian chromium, end2end npm packages.
# Idempotent: a second run only checks versions and returns in seconds.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=scripts/env.sh
. "$here/env.sh"

CARGO_LEPTOS_VERSION=0.3.11
BINARYEN_VERSION=132.0.0
tools="$CS_CACHE/tools"
mkdir -p "$tools/bin" "$CS_CACHE/src"

say() { printf '\033[1m[install]\033[0m %s\n' "$*"; }

# The build tools are used only as tools: build them quickly rather than make them fast.
export CARGO_PROFILE_RELEASE_LTO=false
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=64
export CARGO_PROFILE_RELEASE_OPT_LEVEL=1
export CARGO_PROFILE_RELEASE_DEBUG=false

# Unpacks one crate's published source into $CS_CACHE/src/NAME-VERSION.
fetch_crate() {
  local name=$1 version=$2 dir="$CS_CACHE/src/$1-$2"
  if [ ! -f "$dir/Cargo.toml" ]; then
    rm -rf "$dir"
    curl -fsSL "https://static.crates.io/crates/$name/$name-$version.crate" | tar -xz -C "$CS_CACHE/src"
  fi
  echo "$dir"
}

# --- wasm32 target ---------------------------------------------------------------------------
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# --- cargo-leptos --------------------------------------------------------------------------------
if [ "$(cargo-leptos --version 2>/dev/null || true)" != "cargo-leptos $CARGO_LEPTOS_VERSION" ]; then
  say "building cargo-leptos $CARGO_LEPTOS_VERSION with no_downloads (once per machine; about 15-20 minutes on 2 cores)"
  src=$(fetch_crate cargo-leptos "$CARGO_LEPTOS_VERSION")
  # Its lockfile names cargo-util-schemas 0.14.2, which needs rustc 1.96; 0.14.1 builds on 1.95.
  (cd "$src" && cargo update -q -p cargo-util-schemas --precise 0.14.1 2>/dev/null || true)
  cargo install --locked --features no_downloads --root "$tools" --path "$src"
fi

# --- wasm-bindgen CLI, exactly the version Cargo.lock pins ------------------------------------------
wb_version=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' "$root/Cargo.lock")
if [ -z "$wb_version" ]; then echo "cannot find wasm-bindgen in Cargo.lock" >&2; exit 1; fi
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $wb_version" ]; then
  say "building wasm-bindgen-cli $wb_version (once per machine; about 3 minutes)"
  src=$(fetch_crate wasm-bindgen-cli "$wb_version")
  # Its lockfile names a webpki-roots release that was yanked; 1.0.10 resolves.
  (cd "$src" && cargo update -q -p webpki-roots --precise 1.0.10 2>/dev/null || true)
  cargo install --locked --root "$tools" --path "$src"
fi

# --- wasm-opt from npm binaryen (Debian's 108 produces wasm that never hydrates) -------------------
if [ "$(wasm-opt --version 2>/dev/null | awk '{print $3}')" != "${BINARYEN_VERSION%%.*}" ]; then
  say "installing wasm-opt from npm binaryen@$BINARYEN_VERSION"
  mkdir -p "$CS_CACHE/npm"
  npm install --silent --no-audit --no-fund --prefix "$CS_CACHE/npm" "binaryen@$BINARYEN_VERSION"
fi

# --- Debian chromium for the end-to-end tests -------------------------------------------------------
if [ "${1:-}" = "--with-browser" ] && [ ! -x /usr/bin/chromium ]; then
  say "installing Debian chromium (about a minute)"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi

# --- end2end npm packages (Playwright without its browser download) ---------------------------------
if [ "${1:-}" = "--with-browser" ]; then
  if [ ! -d "$root/end2end/node_modules/@playwright/test" ] || [ "$root/end2end/package-lock.json" -nt "$root/end2end/node_modules/.package-lock.json" ]; then
    say "installing end2end npm packages"
    (cd "$root/end2end" && npm ci --silent --no-audit --no-fund)
  fi
fi
say "tools ready"
