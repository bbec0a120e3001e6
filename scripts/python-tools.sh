#!/usr/bin/env bash
# The Python tools the tests use, in a venv in the cache (pinned, from PyPI): schemathesis (API
# fuzzing, scripts/fuzz.sh) and aiosmtpd (the real SMTP server the email tests send to).
# Prints the venv's python. Usage: python="$(bash scripts/python-tools.sh)"
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
venv="$CS_CACHE/venv"
if [ ! -x "$venv/bin/python" ]; then
  echo "==> making a Python venv in $venv" >&2
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  # Debian's python3 needs python3-venv for venvs.
  python3 -m venv "$venv" 2>/dev/null || { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null && rm -rf "$venv" && python3 -m venv "$venv"; } >&2
fi
if [ ! -x "$venv/bin/schemathesis" ] || ! "$venv/bin/python" -c "import aiosmtpd" 2>/dev/null; then
  echo "==> installing schemathesis and aiosmtpd into $venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check "schemathesis==4.32.5" "aiosmtpd==1.4.6" >&2
fi
echo "$venv/bin/python"
