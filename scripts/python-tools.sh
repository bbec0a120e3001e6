#!/usr/bin/env bash
# The Python tools the tests use, in a venv in the cache (pinned, from PyPI): schemathesis (API
# fuzzing, scripts/fuzz.sh), aiosmtpd (the real SMTP server the email tests send to), a2a-sdk
# (the official A2A client the A2A tests drive) and mcp (the official MCP client SDK the MCP
# gateway's tests drive). A2A 0.3's client (a2a-sdk 0.3.x) cannot share that venv with 1.x's, so
# it has one of its own.
# Prints the venv's python. Usage: python="$(bash scripts/python-tools.sh)", or
# python03="$(bash scripts/python-tools.sh --a2a-0.3)" for the A2A 0.3 client's.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
venv="$CS_CACHE/venv"
if [ "${1:-}" = "--a2a-0.3" ]; then
  venv="$CS_CACHE/venv-a2a-0.3"
  if ! "$venv/bin/python" -c "import a2a.client" 2>/dev/null; then
    echo "==> installing a2a-sdk 0.3 into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check "a2a-sdk==0.3.26" >&2
  fi
  echo "$venv/bin/python"
  exit 0
fi
if [ ! -x "$venv/bin/python" ]; then
  echo "==> making a Python venv in $venv" >&2
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  # Debian's python3 needs python3-venv for venvs.
  python3 -m venv "$venv" 2>/dev/null || { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null && rm -rf "$venv" && python3 -m venv "$venv"; } >&2
fi
if [ ! -x "$venv/bin/schemathesis" ] || ! "$venv/bin/python" -c "import aiosmtpd, a2a.client, mcp" 2>/dev/null; then
  echo "==> installing schemathesis, aiosmtpd, a2a-sdk and mcp into $venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check "schemathesis==4.32.5" "aiosmtpd==1.4.6" "a2a-sdk==1.3.0" "mcp==2.3.0" >&2
fi
echo "$venv/bin/python"
