#!/usr/bin/env bash
# Builds the site and the server: what `cargo leptos build` does for this project, with only the
# tools the build needs (cargo, wasm-bindgen CLI, and for release wasm-opt and esbuild from npm).
#   bash scripts/build-site.sh            debug build (what the tests use)
#   bash scripts/build-site.sh --release  release build (what `./x run` serves)
#   add --site-only or --server-only to build one half (scripts/run.sh overlaps the server's
#   build with installing the tools)
# The two halves use separate target dirs and need each other only at run time, so they build
# side by side: on 2 cores each fills the other's idle time (a big crate's serial front end).
# Output: $CARGO_TARGET_DIR/site/pkg/countersign.{js,wasm,css} (release; debug: site-debug/, so
# the tests' debug build never replaces the bundle a running `./x run` serves) and the `countersign` binary in
# $CARGO_TARGET_DIR/{debug,release}/. Settings come from [[workspace.metadata.leptos]] in Cargo.toml,
# which `cargo leptos watch` (optional, not installed by the scripts) reads too.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/env.sh

release=0; site=1; server=1
for arg in "$@"; do
  case "$arg" in
    --release) release=1 ;;
    --site-only) server=0 ;;
    --server-only) site=0 ;;
    *) echo "usage: build-site.sh [--release] [--site-only | --server-only]" >&2; exit 2 ;;
  esac
done
name="$LEPTOS_OUTPUT_NAME"        # output-name
site_root="$CARGO_TARGET_DIR/site" # site-root
[ $release = 1 ] || site_root="$CARGO_TARGET_DIR/site-debug"
pkg="$site_root/pkg"              # site-pkg-dir
# The WASM gets its own target dir (as with cargo-leptos) so the host and wasm builds, whose
# flags differ, never invalidate each other.
front_target="$CARGO_TARGET_DIR/front"
mkdir -p "$pkg"
say() { printf '\033[1m[build]\033[0m %s\n' "$*"; }

# Both builds take `--cfg erase_components` from .cargo/config.toml.
if [ $release = 1 ]; then
  wasm_profile=(--profile wasm-release); wasm_dir=wasm-release
  server_profile=(--release)
else
  wasm_profile=(); wasm_dir=debug
  server_profile=()
fi

build_wasm() {
  say "hydrate crate (frontend) for wasm32"
  cargo build --package=frontend --lib --target=wasm32-unknown-unknown --no-default-features \
    --target-dir="$front_target" "${wasm_profile[@]}"

  # Compressed copies are made for release builds only; a stale one would be served in place of
  # the file it no longer matches.
  rm -f "$pkg"/*.gz "$pkg"/*.br
  say "wasm-bindgen → $pkg/$name.js, $name.wasm"
  wasm-bindgen --target web --no-typescript --out-name "$name" --out-dir "$pkg" \
    "$front_target/wasm32-unknown-unknown/$wasm_dir/frontend.wasm"
  # Leptos' hydration script loads `<output-name>.wasm` (not wasm-bindgen's `_bg` name).
  mv -f "$pkg/${name}_bg.wasm" "$pkg/$name.wasm"

  if [ $release = 1 ]; then
    say "wasm-opt -Oz, twice (about 30-60 s), and minified JS and CSS"
    # `--low-memory-unused`: Rust never uses the first 1 KB of linear memory (its data starts at
    # 1 MiB), so wasm-opt may fold small constant offsets into addresses. A second -Oz pass finds
    # what the first one's inlining opened up (about 5 KB raw, 1.3 KB gzip; docs/benchmarks.md §7).
    wasm-opt -Oz -Oz --low-memory-unused --enable-bulk-memory "$pkg/$name.wasm" -o "$pkg/$name.wasm"
    esbuild "$pkg/$name.js" --minify --format=esm --log-level=warning --allow-overwrite --outfile="$pkg/$name.js"
    esbuild style/main.css --bundle --minify --log-level=warning --outfile="$pkg/$name.css"
    # Precompressed siblings: the server sends `.br` or `.gz` to a browser that accepts it
    # (leptos_axum's file handler), so the page's bytes cross the network compressed.
    say "precompressing (brotli 11, gzip 9)"
    node -e '
      const zlib = require("zlib"), fs = require("fs");
      for (const file of process.argv.slice(1)) {
        const raw = fs.readFileSync(file);
        fs.writeFileSync(file + ".gz", zlib.gzipSync(raw, { level: 9 }));
        const params = { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length };
        fs.writeFileSync(file + ".br", zlib.brotliCompressSync(raw, { params }));
      }' "$pkg/$name.wasm" "$pkg/$name.js" "$pkg/$name.css"
  else
    cp style/main.css "$pkg/$name.css"
  fi
}

build_server() {
  cargo build --package=server --bin=countersign --no-default-features "${server_profile[@]}"
}

if [ $site = 1 ] && [ $server = 1 ]; then
  log="$CARGO_TARGET_DIR/server-build.log"
  say "server (countersign) in the background, its output in $log"
  build_server >"$log" 2>&1 &
  server_pid=$!
  trap 'pkill -P "$server_pid" 2>/dev/null; kill "$server_pid" 2>/dev/null || true' EXIT
  build_wasm
  say "waiting for the server build"
  if ! wait "$server_pid"; then
    cat "$log" >&2
    echo "[build] the server build failed (above)" >&2
    exit 1
  fi
  trap - EXIT
  tail -n1 "$log"
elif [ $site = 1 ]; then
  build_wasm
else
  say "server (countersign)"
  build_server
fi
[ $site = 1 ] && say "site ready in $site_root"
exit 0
