#!/usr/bin/env bash
# Installs what building, running and testing Countersign needs, skipping what is already there.
#   wasm32 target, wasm-bindgen CLI (= the version in Cargo.lock), wasm-opt (npm binaryen, never
#   Debian's) and esbuild, and with --with-browser Debian chromium and the end2end npm packages.
# Every tool comes through its ordinary client (rustup, cargo, npm, apt-get), at a pinned version.
# cargo-leptos is not needed (scripts/build-site.sh does its work); install it yourself for
# `cargo leptos watch` if you like.
# Idempotent: a second run only checks versions and returns in seconds.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=scripts/env.sh
. "$here/env.sh"

BINARYEN_VERSION=132.0.0
ESBUILD_VERSION=0.28.2
tools="$CS_CACHE/tools"
mkdir -p "$tools/bin" "$CS_CACHE/src"

say() { printf '\033[1m[install]\033[0m %s\n' "$*"; }

# The build tools are used only as tools: build them quickly rather than make them fast.
export CARGO_PROFILE_RELEASE_LTO=false
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=64
export CARGO_PROFILE_RELEASE_OPT_LEVEL=1
export CARGO_PROFILE_RELEASE_DEBUG=false
# Their own target dir: the project's is busy with the server build that scripts/run.sh starts
# beside this script (one target dir admits one cargo at a time).
export CARGO_TARGET_DIR="$CS_CACHE/tools-target"

# --- wasm32 target ---------------------------------------------------------------------------
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# --- cargo-nextest (runs the Rust tests with a time limit each; new machines usually have it) ---
if ! cargo nextest --version >/dev/null 2>&1; then
  say "installing cargo-nextest (once per machine)"
  cargo install --locked --root "$tools" cargo-nextest
fi

# --- wasm-bindgen CLI, exactly the version Cargo.lock pins ------------------------------------------
wb_version=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' "$root/Cargo.lock")
if [ -z "$wb_version" ]; then echo "cannot find wasm-bindgen in Cargo.lock" >&2; exit 1; fi
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $wb_version" ]; then
  say "building wasm-bindgen-cli $wb_version (once per machine; about 3 minutes)"
  if ! cargo install --locked --root "$tools" wasm-bindgen-cli --version "=$wb_version"; then
    # Its published lockfile names a webpki-roots release the registry no longer serves. The
    # failed install has left the crate's source in cargo's registry cache: build that source
    # with its own lockfile, that one dependency pinned to 1.0.10.
    src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"wasm-bindgen-cli-$wb_version" | head -n1)
    rm -rf "$CS_CACHE/src/wasm-bindgen-cli" && mkdir -p "$CS_CACHE/src" && cp -r "$src" "$CS_CACHE/src/wasm-bindgen-cli"
    (cd "$CS_CACHE/src/wasm-bindgen-cli" && cargo update -q -p webpki-roots --precise 1.0.10)
    cargo install --locked --root "$tools" --path "$CS_CACHE/src/wasm-bindgen-cli"
  fi
fi

# --- wasm-opt (npm binaryen; Debian's 108 produces wasm that never hydrates) and esbuild ---------
# Release builds only: wasm-opt shrinks the WASM, esbuild minifies the JS glue and the CSS.
if [ "$(wasm-opt --version 2>/dev/null | awk '{print $3}')" != "${BINARYEN_VERSION%%.*}" ] \
   || [ "$(esbuild --version 2>/dev/null || true)" != "$ESBUILD_VERSION" ]; then
  say "installing wasm-opt (npm binaryen@$BINARYEN_VERSION) and esbuild@$ESBUILD_VERSION"
  mkdir -p "$CS_CACHE/npm"
  npm install --silent --no-audit --no-fund --prefix "$CS_CACHE/npm" "binaryen@$BINARYEN_VERSION" "esbuild@$ESBUILD_VERSION"
fi

# --- Debian chromium for the end-to-end tests -------------------------------------------------------
# libfaketime: the chaos harness runs one replica with its wall clock skewed.
if [ "${1:-}" = "--with-browser" ] && { [ ! -x /usr/bin/chromium ] || ! ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1; }; then
  say "installing Debian chromium and libfaketime (about a minute)"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium libfaketime >/dev/null
fi

# --- end2end npm packages (Playwright without its browser download) ---------------------------------
if [ "${1:-}" = "--with-browser" ]; then
  if [ ! -d "$root/end2end/node_modules/@playwright/test" ] || [ "$root/end2end/package-lock.json" -nt "$root/end2end/node_modules/.package-lock.json" ]; then
    say "installing end2end npm packages"
    (cd "$root/end2end" && npm ci --silent --no-audit --no-fund)
  fi
fi
say "tools ready"
