#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback, for tests, benches and `./hypha cluster start`.
#   scripts/postgres.sh start --dir DIR [--port N]   init (first time) and start; prints url=, port=, pid=, dir=
#   scripts/postgres.sh stop --dir DIR               fast shutdown (a no-op when it is not running)
#   scripts/postgres.sh status --dir DIR             exit 0 when it runs
#   scripts/postgres.sh install                      install Debian's postgresql-15 when no PostgreSQL is found
# The server listens on 127.0.0.1 only (a free random port unless --port), keeps its socket in DIR,
# and runs as the 'postgres' user when started by root (initdb refuses root). Connect as user
# 'postgres' without a password over 127.0.0.1; other roles need a SCRAM password. The same
# KEY=VALUE lines go to DIR/postgres.env.
set -euo pipefail

die() { echo "postgres.sh: $*" >&2; exit 1; }

find_bin() { # prints the bin directory of the newest PostgreSQL found
  local d best=""
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && best=$d
  done
  if [ -z "$best" ] && command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then
    best=$(dirname "$(command -v pg_ctl)")
  fi
  [ -n "$best" ] && echo "$best"
}

install_pg() {
  [ -n "$(find_bin)" ] && return 0
  [ "$(id -u)" = 0 ] || die "PostgreSQL is not installed and installing it needs root (apt-get install postgresql-15)"
  command -v apt-get >/dev/null 2>&1 || die "PostgreSQL is not installed and there is no apt-get to install it"
  # no default cluster on port 5432: every server of ours is made by this script
  mkdir -p /etc/postgresql-common
  grep -qs '^create_main_cluster' /etc/postgresql-common/createcluster.conf \
    || echo "create_main_cluster = false" >> /etc/postgresql-common/createcluster.conf
  echo "postgres.sh: installing postgresql-15 (apt-get)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q postgresql-15 >/dev/null 2>&1; then
    apt-get update -q >/dev/null 2>&1 || true
    apt-get install -y -q postgresql-15 >/dev/null || die "apt-get install postgresql-15 failed"
  fi
  [ -n "$(find_bin)" ] || die "postgresql-15 installed but no initdb/pg_ctl found under /usr/lib/postgresql"
}

as_pg() { # runs a command as the postgres user when root, else as ourselves
  if [ "$(id -u)" = 0 ]; then
    if command -v runuser >/dev/null 2>&1; then runuser -u postgres -- "$@"; else su -s /bin/sh postgres -c "$(printf '%q ' "$@")"; fi
  else
    "$@"
  fi
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

cmd=${1:-}; [ $# -gt 0 ] && shift
dir=""; port=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --dir=*) dir=${1#--dir=}; shift ;;
    --port) port=$2; shift 2 ;;
    --port=*) port=${1#--port=}; shift ;;
    *) die "unknown argument '$1'" ;;
  esac
done

case "$cmd" in
  install) install_pg; echo "bin=$(find_bin)" ;;
  start|stop|status)
    [ -n "$dir" ] || die "$cmd needs --dir DIR"
    mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
    data=$dir/data
    if [ "$cmd" = start ]; then install_pg; fi
    bin=$(find_bin) || true
    [ -n "$bin" ] || die "PostgreSQL is not installed (run: scripts/postgres.sh install)"
    running() { [ -f "$data/postmaster.pid" ] && as_pg "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; }
    case "$cmd" in
      status) running ;;
      stop)
        if running; then as_pg "$bin/pg_ctl" -D "$data" -m fast -w -t 60 stop >/dev/null; fi
        ;;
      start)
        if ! running; then
          if [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1; then
            chown postgres "$dir"
            as_pg test -w "$dir" || die "user postgres cannot write $dir (a parent directory is closed to it?)"
          fi
          if [ ! -f "$data/PG_VERSION" ]; then
            as_pg "$bin/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 -N >"$dir/initdb.log" 2>&1 \
              || as_pg "$bin/initdb" -D "$data" -U postgres -A trust -E UTF8 -N >"$dir/initdb.log" 2>&1 \
              || die "initdb failed (see $dir/initdb.log)"
            # superuser without password on loopback; any other role with a SCRAM password
            as_pg sh -c "printf 'local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n' > '$data/pg_hba.conf'"
          fi
          # a random port below the kernel's ephemeral range (32768 on Linux), so that a restart on the
          # same port does not find it taken by some process's outgoing connection
          low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
          [ "$low" -gt 21000 ] 2>/dev/null || low=32768
          tries=0
          while :; do
            p=${port:-$((20000 + RANDOM % (low - 20000)))}
            if port_free "$p" && as_pg "$bin/pg_ctl" -D "$data" -l "$dir/postgres.log" -w -t 60 \
                -o "-p $p -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null 2>&1; then
              break
            fi
            tries=$((tries + 1))
            [ -z "$port" ] && [ $tries -lt 8 ] || die "could not start PostgreSQL (see $dir/postgres.log)"
          done
          port=$p
        fi
        pid=$(head -1 "$data/postmaster.pid")
        port=$(sed -n 4p "$data/postmaster.pid")
        {
          echo "url=jdbc:postgresql://127.0.0.1:$port/postgres"
          echo "port=$port"
          echo "pid=$pid"
          echo "user=postgres"
          echo "dir=$dir"
          echo "bin=$bin"
        } | tee "$dir/postgres.env"
        ;;
    esac
    ;;
  *) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; [ -z "$cmd" ] || [ "$cmd" = help ] || exit 2 ;;
esac
