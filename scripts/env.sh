# Shared environment for the project's scripts: where tools and build output live.
# Kept outside the clone so that a fresh clone on the same machine reuses them.
# Source it; it does not install anything.
CS_CACHE="${COUNTERSIGN_CACHE:-$HOME/.cache/countersign}"
export CS_CACHE
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CS_CACHE/target}"
export PATH="$CS_CACHE/tools/bin:$CS_CACHE/npm/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# Tell Playwright never to download a browser: Debian's chromium is used instead.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
# Leptos reads this at compile time (option_env!) to name the JS/WASM/CSS bundle; setting it for
# every cargo command keeps `cargo test`, scripts/build-site.sh and `cargo leptos` from
# invalidating each other's build of the leptos crates.
export LEPTOS_OUTPUT_NAME=countersign
# The email tests' SMTP server runs on the Python that scripts/python-tools.sh prepares.
if [ -z "${COUNTERSIGN_TEST_PYTHON:-}" ] && [ -x "$CS_CACHE/venv/bin/python" ]; then
  export COUNTERSIGN_TEST_PYTHON="$CS_CACHE/venv/bin/python"
fi
