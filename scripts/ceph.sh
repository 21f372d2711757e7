#!/usr/bin/env bash
# A one-node Ceph cluster with a RADOS Gateway (S3) on loopback, for tests, benches and trying things out.
#
#   scripts/ceph.sh start  [--dir DIR]   install the Debian packages when missing (as root), bootstrap a monitor,
#                                        one bluestore OSD on a sparse file and a gateway, all under DIR; create
#                                        an S3 user; print DIR/ceph.json (endpoint and keys)
#   scripts/ceph.sh stop   [--dir DIR] [--purge]
#                                        end exactly what start started (gateway, OSD, monitor) by their pid
#                                        files: SIGTERM, then SIGKILL after a bound; --purge also removes DIR
#   scripts/ceph.sh status [--dir DIR]   exit 0 and print DIR/ceph.json when every daemon runs and S3 answers
#
# DIR defaults to $CEPH_TEST_DIR, else /tmp/hypha-ceph. A start on a DIR whose cluster already runs prints its
# ceph.json and starts nothing. Exit codes: 0 done, 1 failed, 2 usage, 3 the Ceph packages are missing and
# cannot be installed (not root, or apt-get failed) -- callers may skip on 3, with the printed reason.
# Facts behind the settings: ../shared/CEPH.md of the project (Ceph 16.2 Pacific from Debian bookworm).
set -euo pipefail

PACKAGES=(ceph-mon ceph-osd radosgw ceph-common)
BINARIES=(ceph ceph-mon ceph-osd radosgw radosgw-admin ceph-authtool monmaptool)
ACCESS_KEY=hypha-ceph-access
SECRET_KEY=hypha-ceph-secret-0123456789abcdef
STOP_BOUND=10     # seconds a daemon gets after SIGTERM
START_BOUND=120   # seconds each start step may take

say() { echo "ceph: $*" >&2; }
die() { say "$*"; exit 1; }

cmd=${1:-}
[ $# -gt 0 ] && shift
DIR=${CEPH_TEST_DIR:-/tmp/hypha-ceph}
PURGE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) [ $# -ge 2 ] || { say "--dir needs a directory"; exit 2; }; DIR=$2; shift 2 ;;
    --dir=*) DIR=${1#--dir=}; shift ;;
    --purge) PURGE=1; shift ;;
    *) say "unknown option '$1'"; exit 2 ;;
  esac
done
if [ "$cmd" = start ]; then mkdir -p "$DIR"; fi
if [ ! -d "$DIR" ]; then
  [ "$cmd" = stop ] && exit 0
  [ "$cmd" = status ] && { say "not running: no $DIR"; exit 1; }
fi
[ -d "$DIR" ] && DIR=$(cd "$DIR" && pwd)
CONF=$DIR/ceph.conf
JSON=$DIR/ceph.json
export CEPH_CONF=$CONF

# the daemons in start order; their pid files are named by the 'pid file = $run/$name.pid' setting
DAEMONS=(mon.a osd.0 client.rgw)
pidfile() { echo "$DIR/run/$1.pid"; }
alive() { local f; f=$(pidfile "$1"); [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; }

endpoint() { sed -n 's/.*"endpoint": *"\([^"]*\)".*/\1/p' "$JSON" 2>/dev/null; }
answers() { # the gateway answers HTTP at $1
  local code
  code=$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$1" 2>/dev/null || true)
  [ -n "$code" ] && [ "$code" != 000 ]
}

running() {
  [ -f "$JSON" ] || return 1
  local d
  for d in "${DAEMONS[@]}"; do alive "$d" || return 1; done
  answers "$(endpoint)"
}

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
  local bound=$1 what=$2; shift 2
  local deadline=$((SECONDS + bound))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then die "timed out after ${bound}s waiting for $what (logs under $DIR/log)"; fi
    sleep 0.5
  done
}

install_packages() {
  local missing=() b
  for b in "${BINARIES[@]}"; do command -v "$b" >/dev/null 2>&1 || missing+=("$b"); done
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    say "the Ceph packages are not installed (missing: ${missing[*]}) and installing them needs root:"
    say "  apt-get install -y --no-install-recommends ${PACKAGES[*]} curl"
    exit 3
  fi
  say "installing ${PACKAGES[*]} (about 66 MB, a minute)..."
  local log=$DIR/apt.log
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${PACKAGES[@]}" curl >"$log" 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get update >>"$log" 2>&1 || true
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${PACKAGES[@]}" curl >>"$log" 2>&1; then
      say "apt-get could not install ${PACKAGES[*]}; its last lines:"
      tail -5 "$log" >&2
      exit 3
    fi
  fi
  for b in "${BINARIES[@]}"; do command -v "$b" >/dev/null 2>&1 || { say "installed, but $b is still missing"; exit 3; }; done
}

free_port() { # a free loopback TCP port such that $1 consecutive ports are free
  local n=$1 p i ok low
  for _ in $(seq 1 200); do
    # below the kernel's ephemeral range (a port in it may become an outgoing connection before the bind)
    low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    [ "$low" -gt 21000 ] 2>/dev/null || low=32768
    p=$((20000 + RANDOM % (low - 20000 - n))); ok=1
    for i in $(seq 0 $((n - 1))); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$((p + i))") 2>/dev/null; then ok=0; break; fi
    done
    [ $ok = 1 ] && { echo "$p"; return 0; }
  done
  die "no free port found"
}

write_conf() { # fsid mon_port rgw_port
  cat >"$CONF" <<EOF
# written by scripts/ceph.sh: a one-node cluster, every path under $DIR, loopback only
[global]
fsid = $1
mon host = [v2:127.0.0.1:$2,v1:127.0.0.1:$(($2 + 1))]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $DIR/keyring
run dir = $DIR/run
admin socket = $DIR/run/\$name.asok
pid file = $DIR/run/\$name.pid
log file = $DIR/log/\$name.log
crash dir = $DIR/crash
mon data = $DIR/mon/\$cluster-\$id
osd data = $DIR/osd/\$cluster-\$id
rgw data = $DIR/rgw/\$cluster-\$id
# one node, one OSD: pools of one copy, no host-level placement
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon warn on pool no redundancy = false
mon data avail crit = 1
# a small machine
osd memory target = 1073741824
osd op num shards = 1

[osd]
osd objectstore = bluestore
bluestore block create = true
bluestore block size = 21474836480
bluestore block db create = false
bluestore block wal create = false
bluestore fsck on mkfs = false
# outside the OSD data dir: with <osd data>/block, mkfs makes a symlink to itself
bluestore block path = $DIR/osd/\$cluster-\$id.block

[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$3
rgw dns name = localhost
# deleted data and multipart leftovers go after ~1 min instead of the default 2 h
rgw gc obj min wait = 30
rgw gc processor period = 30
EOF
}

start() {
  if running; then
    say "already running (pids under $DIR/run)"
    cat "$JSON"
    return 0
  fi
  install_packages
  # leftovers of an earlier, broken start: end what its pid files name, then begin afresh
  stop_daemons quiet
  rm -rf "$DIR/mon" "$DIR/osd" "$DIR/rgw" "$DIR/run" "$DIR/log" "$DIR/crash" "$DIR/keyring" "$DIR/monmap" "$JSON"
  mkdir -p "$DIR/mon" "$DIR/osd" "$DIR/rgw" "$DIR/run" "$DIR/log" "$DIR/crash"
  local t0=$SECONDS fsid mon_port rgw_port osd_uuid
  fsid=$(cat /proc/sys/kernel/random/uuid)
  osd_uuid=$(cat /proc/sys/kernel/random/uuid)
  mon_port=$(free_port 2)
  rgw_port=$(free_port 1)
  write_conf "$fsid" "$mon_port" "$rgw_port"

  local kr=$DIR/keyring
  ceph-authtool --create-keyring "$kr" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool "$kr" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
  ceph-authtool "$kr" --gen-key -n osd.0 --cap mon 'allow profile osd' --cap mgr 'allow profile osd' --cap osd 'allow *' >/dev/null
  ceph-authtool "$kr" --gen-key -n client.rgw --cap mon 'allow rw' --cap osd 'allow rwx' >/dev/null
  chmod 600 "$kr"
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port,v1:127.0.0.1:$((mon_port + 1))]" "$DIR/monmap" >/dev/null

  ceph-mon --mkfs -i a --monmap "$DIR/monmap" --keyring "$kr" >"$DIR/log/mkfs-mon.log" 2>&1 \
    || { tail -5 "$DIR/log/mkfs-mon.log" >&2; die "ceph-mon --mkfs failed"; }
  ceph-mon -i a 2>>"$DIR/log/start-mon.err" || die "ceph-mon did not start (see $DIR/log/mon.a.log)"
  wait_for $START_BOUND "the monitor" timeout 5 ceph mon stat

  ceph osd new "$osd_uuid" 0 >/dev/null
  mkdir -p "$DIR/osd/ceph-0"
  ceph-osd -i 0 --mkfs --osd-uuid "$osd_uuid" >"$DIR/log/mkfs-osd.log" 2>&1 \
    || { tail -5 "$DIR/log/mkfs-osd.log" >&2; die "ceph-osd --mkfs failed"; }
  ceph-osd -i 0 2>>"$DIR/log/start-osd.err" || die "ceph-osd did not start (see $DIR/log/osd.0.log)"
  wait_for $START_BOUND "osd.0 up" bash -c 'timeout 5 ceph osd dump | grep -q "^osd.0 up"'

  radosgw -n client.rgw 2>>"$DIR/log/start-rgw.err" || die "radosgw did not start (see $DIR/log/client.rgw.log)"
  wait_for $START_BOUND "the gateway on 127.0.0.1:$rgw_port" answers "http://127.0.0.1:$rgw_port"
  radosgw-admin user create --uid hypha --display-name "Hypha-Mesh tests" \
    --access-key "$ACCESS_KEY" --secret-key "$SECRET_KEY" >"$DIR/log/user.json" 2>"$DIR/log/user.err" \
    || { tail -5 "$DIR/log/user.err" >&2; die "radosgw-admin user create failed"; }

  cat >"$JSON" <<EOF
{
  "endpoint": "http://127.0.0.1:$rgw_port",
  "region": "us-east-1",
  "access_key": "$ACCESS_KEY",
  "secret_key": "$SECRET_KEY",
  "path_style": true,
  "version": "$(ceph-mon --version | awk '{print $3}')",
  "dir": "$DIR",
  "conf": "$CONF",
  "started_in_seconds": $((SECONDS - t0)),
  "pids": {"mon.a": $(cat "$(pidfile mon.a)"), "osd.0": $(cat "$(pidfile osd.0)"), "client.rgw": $(cat "$(pidfile client.rgw)")}
}
EOF
  say "up in $((SECONDS - t0)) s: S3 at http://127.0.0.1:$rgw_port"
  cat "$JSON"
}

stop_daemons() { # [quiet]; reverse start order, each by its pid file
  local i d f pid deadline
  for ((i = ${#DAEMONS[@]} - 1; i >= 0; i--)); do
    d=${DAEMONS[$i]}
    f=$(pidfile "$d")
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      deadline=$((SECONDS + STOP_BOUND))
      while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
      if kill -0 "$pid" 2>/dev/null; then
        [ "${1:-}" = quiet ] || say "$d ($pid) ignored SIGTERM for ${STOP_BOUND}s: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
      fi
      [ "${1:-}" = quiet ] || say "stopped $d ($pid)"
    fi
    rm -f "$f"
  done
}

case "$cmd" in
  start) start ;;
  stop)
    stop_daemons
    if [ $PURGE = 1 ]; then rm -rf "$DIR"; say "removed $DIR"; fi
    ;;
  status)
    if running; then cat "$JSON"; else say "not running under $DIR"; exit 1; fi
    ;;
  *)
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
