#!/usr/bin/env bash
# A throwaway PostgreSQL for the tests, from Debian's packages (installed if missing): a fresh
# cluster in a temporary directory on a free port, trust auth on 127.0.0.1, no fsync.
#   eval "$(bash scripts/pg.sh start)"   # exports COUNTERSIGN_TEST_POSTGRES (URL) and CS_PG_DIR
#   bash scripts/pg.sh createdb NAME     # prints the URL of a new, empty database on it
#   bash scripts/pg.sh stop "$CS_PG_DIR"
set -euo pipefail
sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"

bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

# initdb refuses to run as root: run the server as the `postgres` user the package creates.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-start}" in
  start)
    if [ -z "$(bindir)" ]; then
      echo "==> installing PostgreSQL from Debian's packages" >&2
      $sudo apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
    fi
    bin="$(bindir)"
    dir="$(mktemp -d /tmp/countersign-pg.XXXXXX)"
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >/dev/null
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=500" \
      start >/dev/null
    echo "export COUNTERSIGN_TEST_POSTGRES=postgres://postgres@127.0.0.1:$port/postgres CS_PG_DIR=$dir"
    ;;
  createdb)
    name="${2:?usage: pg.sh createdb NAME}"
    url="${COUNTERSIGN_TEST_POSTGRES:?start the server first}"
    "$(bindir)/psql" "$url" -qAt -c "CREATE DATABASE $name" >/dev/null
    echo "${url%/*}/$name"
    ;;
  stop)
    dir="${2:?usage: pg.sh stop DIR}"
    as_owner "$(bindir)/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
esac
