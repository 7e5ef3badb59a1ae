#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests and CI: a fresh cluster in a directory of
# its own, trust authentication, listening on 127.0.0.1 only, its socket in that directory.
# It allows 300 connections, not 100: a pool of workers with many waiting commands needs
# more than the default (docs/scale.md, "Connections").
#
#   scripts/postgres-cluster.sh start DIR [PORT]   prints postgres://postgres@127.0.0.1:PORT/postgres
#   scripts/postgres-cluster.sh stop DIR           stops the server and removes DIR
#
# The URL is the only line on stdout, so `url="$(scripts/postgres-cluster.sh start "$dir")"`
# works; progress and diagnostics go to stderr. Without PORT a free port is picked. When
# no PostgreSQL is installed and we run as root with apt-get, Debian's `postgresql` is
# installed. initdb refuses to run as root, so as root the cluster belongs to the
# unprivileged `postgres` user. `stop` is safe on a directory that was never started.
set -Eeuo pipefail

# stdout carries the URL alone: everything else, from this script and the tools it runs,
# goes to stderr.
exec 3>&1 1>&2

me="postgres-cluster"
die() {
  echo "$me: $*" >&2
  exit 1
}
trap 'echo "$me: failed: $BASH_COMMAND (line $LINENO)" >&2' ERR

usage="usage: scripts/postgres-cluster.sh start DIR [PORT] | stop DIR"
[ $# -ge 2 ] || die "$usage"
cmd="$1"
[ -n "$2" ] || die "$usage"
# Absolute, because the server's commands run from / (the unprivileged user may not be
# allowed into the caller's working directory).
dir="$(realpath -m -- "$2")"
[ "$dir" != "/" ] || die "refusing to use / as the cluster directory"

# The newest Debian install, then whatever pg_config or PATH knows of.
find_bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  done
  if command -v pg_config >/dev/null 2>&1; then
    d="$(pg_config --bindir 2>/dev/null || true)"
    if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  fi
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
    return 0
  fi
  return 1
}

# Runs a command as `user`: directly when that is us, else through runuser (or su).
# Descriptor 3 (the real stdout) is closed for it: a server that inherited it would keep
# the caller's `$(...)` waiting for as long as the server runs.
user=""
as_user() {
  if [ "$user" = "$(id -un)" ]; then
    (cd / && "$@") 3>&-
  elif command -v runuser >/dev/null 2>&1; then
    (cd / && runuser -u "$user" -- "$@") 3>&-
  else
    (cd / && su "$user" -s /bin/bash -c "$(printf '%q ' "$@")") 3>&-
  fi
}

# A port nothing listens on: the kernel's pick for port 0, else the first port from
# 55432 up that refuses a connection.
free_port() {
  if command -v node >/dev/null 2>&1; then
    node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})' && return 0
  fi
  local p
  for p in $(seq 55432 55532); do
    if ! (exec 4<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  return 1
}

stop_cluster() {
  if [ ! -e "$dir" ]; then
    echo "$me: $dir does not exist: nothing to stop" >&2
    return 0
  fi
  # Only a cluster directory (or an empty one) is removed: a mistyped DIR must not lose files.
  if [ ! -f "$dir/PG_VERSION" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
    die "$dir is not a PostgreSQL cluster directory; not removing it"
  fi
  if [ -f "$dir/postmaster.pid" ]; then
    local bindir
    bindir="$(find_bindir)" || die "a server runs in $dir but pg_ctl was not found to stop it"
    user="$(stat -c %U "$dir")"
    local status=0
    as_user "$bindir/pg_ctl" -D "$dir" status >/dev/null 2>&1 || status=$?
    # 3: no server runs (a stale pid file); anything else non-zero means pg_ctl cannot tell.
    if [ "$status" -ne 3 ]; then
      if ! as_user "$bindir/pg_ctl" -D "$dir" -m fast -w stop; then
        as_user "$bindir/pg_ctl" -D "$dir" -m immediate -w stop \
          || die "could not stop the server in $dir"
      fi
    fi
  fi
  rm -rf -- "$dir"
}

start_cluster() {
  local port="${1:-}"
  if [ -n "$port" ]; then
    [[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] || die "PORT must be a number from 1 to 65535, not '$port'"
  fi

  local bindir
  if ! bindir="$(find_bindir)"; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "$me: PostgreSQL is not installed; installing Debian's postgresql package" >&2
      export DEBIAN_FRONTEND=noninteractive
      # An image without package lists needs an update first.
      apt-get install -y postgresql || { apt-get update && apt-get install -y postgresql; } \
        || die "apt-get install postgresql failed"
      bindir="$(find_bindir)" || die "postgresql was installed but initdb and pg_ctl were not found"
    else
      die "PostgreSQL is not installed (no initdb/pg_ctl in /usr/lib/postgresql/*/bin, pg_config --bindir or PATH); install PostgreSQL 15"
    fi
  fi

  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || die "running as root needs the unprivileged 'postgres' user to own the cluster (initdb refuses root), and there is none"
    user="postgres"
  else
    user="$(id -un)"
  fi

  # The server's socket is DIR/.s.PGSQL.PORT, and a socket path has at most 107 bytes.
  [ $((${#dir} + 18)) -le 107 ] || die "$dir is too long a path for the server's socket; use a shorter one (mktemp -d gives one)"
  [[ "$dir" != *"'"* ]] || die "$dir contains a single quote, which the server's options cannot carry"
  if [ -f "$dir/PG_VERSION" ]; then
    die "$dir already holds a cluster; stop it first or give an empty directory"
  fi
  mkdir -p -- "$dir"
  [ -z "$(ls -A "$dir")" ] || die "$dir is not empty; give an empty or new directory"
  if [ "$user" != "$(id -un)" ]; then
    chown "$user:" "$dir"
  fi
  as_user test -w "$dir" -a -x "$dir" \
    || die "user $user cannot write $dir (a parent directory closed to it?); use a directory under /tmp"

  echo "$me: creating a cluster in $dir as $user with $bindir" >&2
  local out
  # C locale: the same sorting on every machine, and no dependence on installed locales.
  if ! out="$(as_user "$bindir/initdb" -D "$dir" -A trust -U postgres -E UTF8 --locale=C --no-sync 2>&1)"; then
    printf '%s\n' "$out" >&2
    die "initdb failed in $dir"
  fi

  # The data is thrown away with the directory: durability costs time and buys nothing.
  local attempts=1 picked=0
  if [ -z "$port" ]; then attempts=3; picked=1; fi
  local i started=0
  for ((i = 1; i <= attempts; i++)); do
    if [ "$picked" -eq 1 ]; then
      port="$(free_port)" || die "no free port found on 127.0.0.1"
    fi
    if as_user "$bindir/pg_ctl" -D "$dir" -l "$dir/log" -w -t 60 \
      -o "-p $port -k '$dir' -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
      start; then
      started=1
      break
    fi
    # Another process may have taken the picked port in between: try another one.
    tail -n 20 "$dir/log" >&2 2>/dev/null || true
    as_user "$bindir/pg_ctl" -D "$dir" -m immediate -w stop >/dev/null 2>&1 || true
  done
  [ "$started" -eq 1 ] || die "the server in $dir did not start (port $port); see its log above"

  # pg_ctl -w waited for the server to be ready; make sure TCP on 127.0.0.1 answers too.
  local ready=0
  [ -x "$bindir/pg_isready" ] || ready=1
  for ((i = 0; ready == 0 && i < 60; i++)); do
    if "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres; then
      ready=1
      break
    fi
    sleep 0.5
  done
  if [ "$ready" -ne 1 ]; then
    as_user "$bindir/pg_ctl" -D "$dir" -m immediate -w stop >/dev/null 2>&1 || true
    die "the server in $dir started but does not accept connections on 127.0.0.1:$port"
  fi

  echo "postgres://postgres@127.0.0.1:$port/postgres" >&3
}

case "$cmd" in
  start)
    [ $# -le 3 ] || die "$usage"
    start_cluster "${3:-}"
    ;;
  stop)
    [ $# -eq 2 ] || die "$usage"
    stop_cluster
    ;;
  *)
    die "$usage"
    ;;
esac
