#!/usr/bin/env bash
# A Hypha-Mesh cluster on loopback, to try cluster mode in one command (as `cockroach demo` does):
# a PostgreSQL (Debian's postgresql-15, installed when missing), a ZooKeeper (its own JVM) and N
# servers in cluster mode.
#   scripts/cluster.sh start [--nodes N] [--dir DIR] [--session-timeout 6s] [--partitions 64]
#                                            returns once every server is healthy and every
#                                            partition has an owner
#   scripts/cluster.sh stop  [--dir DIR]     SIGTERM to every server (they hand their workspaces
#                                            over), then ZooKeeper and PostgreSQL
#   scripts/cluster.sh status [--dir DIR]
#   scripts/cluster.sh upgrade [--dir DIR]  restart every server in turn (SIGTERM: it hands its
#                                            partitions over; start; healthy; every partition owned)
# Writes DIR/cluster.json: {"nodes":[{"url","pid","data_dir"}],"root_token_file",
#   "postgres":{"url","pid"},"zookeeper":{"connect","pid"}}. DIR defaults to ./cluster.
# Needs JAVA_HOME (a 21+ JDK) and the server jar: run it through `./hypha cluster ...`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
JAR=$root/modules/runtime/target/hypha-mesh.jar

die() { echo "cluster.sh: $*" >&2; exit 1; }
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# below the kernel's ephemeral range: a port in it may become some process's outgoing connection
# between this check and the server's bind (seen: "server 1 exited" in a busy test run)
ephemeral_low() { local low; low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768); [ "$low" -gt 21000 ] 2>/dev/null || low=32768; echo "$low"; }
free_port() { local p low; low=$(ephemeral_low); while :; do p=$((20000 + RANDOM % (low - 20000))); port_free "$p" && { echo "$p"; return; }; done; }
env_get() { sed -n "s/^$2=//p" "$1" | head -1; }

cmd=${1:-}; [ $# -gt 0 ] && shift
dir=./cluster; nodes=3; session=6s; partitions=64
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --dir=*) dir=${1#--dir=}; shift ;;
    --nodes) nodes=$2; shift 2 ;;
    --nodes=*) nodes=${1#--nodes=}; shift ;;
    --session-timeout) session=$2; shift 2 ;;
    --session-timeout=*) session=${1#--session-timeout=}; shift ;;
    --partitions) partitions=$2; shift 2 ;;
    --partitions=*) partitions=${1#--partitions=}; shift ;;
    *) die "unknown argument '$1'" ;;
  esac
done
if [ "$cmd" = start ]; then
  mkdir -p "$dir"
  # PostgreSQL runs as postgres (when started by root): it must be able to enter DIR and every
  # parent of it. DIR itself is opened (a mktemp -d DIR is 0700); a closed parent is not ours to
  # open, so say which at once instead of failing later inside initdb
  chmod o+x "$dir" 2>/dev/null || true
  if [ "$(id -u)" = 0 ]; then
    a=$(cd "$dir" && pwd)
    while [ "$a" != / ]; do
      a=$(dirname "$a")
      if id postgres >/dev/null 2>&1; then
        runuser -u postgres -- test -x "$a" 2>/dev/null && continue
      else
        case "$(stat -c %A "$a")" in ?????????[xt]) continue ;; esac
      fi
      die "PostgreSQL runs as user postgres and cannot enter $a (mode $(stat -c %a "$a"); mktemp -d makes 0700 directories): choose a --dir whose parents others may enter, or run: chmod o+x $a"
    done
  fi
fi
# stop, status and start-node look at a cluster that exists: they never create DIR
if [ "$cmd" != start ] && [ -n "$cmd" ] && [ "$cmd" != help ] && [ ! -e "$dir/cluster.json" ] && ! ls -d "$dir"/node-* >/dev/null 2>&1; then
  echo "cluster.sh: no cluster in $(cd "$dir" 2>/dev/null && pwd || echo "$dir") (looked for $dir/cluster.json and $dir/node-*); name its directory with --dir DIR" >&2
  exit 1
fi
dir=$(cd "$dir" && pwd)

node_running() { [ -f "$dir/node-$1/server.pid" ] && kill -0 "$(cat "$dir/node-$1/server.pid")" 2>/dev/null; }

start_node() { # start_node I: starts (or restarts) server I on its recorded port
  local i=$1 nd=$dir/node-$1 port
  mkdir -p "$nd"
  port=$(cat "$nd/port")
  # shellcheck disable=SC2086
  # the JVM's AOT cache of the jar when ./hypha made one (JDK 25+): a restarted server serves sooner
  nohup "${JAVA_HOME:?JAVA_HOME must name a 21+ JDK}/bin/java" -Dguice_bytecode_gen_option=DISABLED -XX:+UseParallelGC \
    $(bash "$root/scripts/aot-cache.sh" flags "$JAR" "$root/modules/runtime/target/hypha-mesh.aot") \
    ${HYPHA_JAVA_OPTS:-} -jar "$JAR" \
    --host=127.0.0.1 --port="$port" --data-dir="$nd/data" \
    --storage.url="$(env_get "$dir/pg/postgres.env" url)" --storage.user=postgres \
    --cluster.zookeeper="$(env_get "$dir/zk/zookeeper.env" connect)" --cluster.session-timeout="$session" \
    --cluster.partitions="$partitions" --cluster.node-id="node-$i" \
    --cluster.advertise-url="http://127.0.0.1:$port" --artifacts.filesystem.dir="$dir/blobs" >"$nd/server.log" 2>&1 &
  echo $! >"$nd/server.pid"
}

wait_healthy() { # wait_healthy I
  local port; port=$(cat "$dir/node-$1/port")
  for _ in $(seq 1 150); do
    curl -sf "http://127.0.0.1:$port/observe/health" >/dev/null 2>&1 && return 0
    node_running "$1" || die "server $1 exited (see $dir/node-$1/server.log)"
    sleep 0.2
  done
  die "server $1 not healthy within 30 s (see $dir/node-$1/server.log)"
}

owned() { # every partition owned, per GET /v1/cluster on server $1
  curl -sf -H "Authorization: Bearer $(cat "$dir/node-1/data/root-token")" "http://127.0.0.1:$(cat "$dir/node-$1/port")/v1/cluster" 2>/dev/null \
    | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const c=JSON.parse(s);process.exit(c.partitions.length>0&&c.partitions.every(p=>p.owner)?0:1)})'
}

wait_owned() { # wait_owned I WHEN: every partition owned within 60 s, per server I
  for _ in $(seq 1 600); do owned "$1" && return 0; sleep 0.1; done
  die "$2, not every partition was owned within 60 s (see $dir/node-*/server.log)"
}

write_json() {
  local i first=1
  {
    printf '{"nodes":['
    for i in $(seq 1 "$nodes"); do
      [ -d "$dir/node-$i" ] || continue
      [ $first = 1 ] || printf ','
      first=0
      printf '{"url":"http://127.0.0.1:%s","pid":%s,"data_dir":"%s"}' "$(cat "$dir/node-$i/port")" \
        "$(cat "$dir/node-$i/server.pid")" "$dir/node-$i/data"
    done
    printf '],"root_token_file":"%s",' "$dir/node-1/data/root-token"
    printf '"postgres":{"url":"%s","pid":%s},' "$(env_get "$dir/pg/postgres.env" url)" "$(env_get "$dir/pg/postgres.env" pid)"
    printf '"zookeeper":{"connect":"%s","pid":%s}}\n' "$(env_get "$dir/zk/zookeeper.env" connect)" "$(env_get "$dir/zk/zookeeper.env" pid)"
  } >"$dir/cluster.json"
}

case "$cmd" in
  start)
    [ -f "$JAR" ] || die "no server jar at $JAR (run ./hypha build)"
    "$here/postgres.sh" start --dir "$dir/pg" >/dev/null
    "$here/zookeeper.sh" start --dir "$dir/zk" >/dev/null
    for i in $(seq 1 "$nodes"); do
      mkdir -p "$dir/node-$i"
      [ -f "$dir/node-$i/port" ] || free_port >"$dir/node-$i/port"
      node_running "$i" || start_node "$i"
      # the first server seeds the shared secrets; the others start beside each other
      [ "$i" = 1 ] && wait_healthy 1
    done
    for i in $(seq 1 "$nodes"); do wait_healthy "$i"; done
    write_json
    # serving, not only healthy: a workspace made next is located at once
    wait_owned 1 "after the start"
    echo "cluster of $nodes servers is up:"
    for i in $(seq 1 "$nodes"); do echo "  http://127.0.0.1:$(cat "$dir/node-$i/port")   (log: $dir/node-$i/server.log)"; done
    echo "root token: $dir/node-1/data/root-token"
    echo "described in $dir/cluster.json; stop with: ./hypha cluster stop --dir $dir"
    ;;
  start-node) # restart one stopped server: start-node --nodes I
    start_node "$nodes"; wait_healthy "$nodes"; write_json
    ;;
  upgrade) # restart every server in turn: SIGTERM (it hands its partitions over), start, healthy, every partition owned, next
    for nd in "$dir"/node-*; do
      i=${nd##*-}
      [ -f "$nd/server.pid" ] || continue
      pid=$(cat "$nd/server.pid")
      t0=$(date +%s%N)
      if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && die "server $i (pid $pid) did not stop within 30 s of SIGTERM"
      fi
      t1=$(date +%s%N)
      start_node "$i"; wait_healthy "$i"
      wait_owned "$i" "after restarting server $i"
      echo "server $i: stopped in $(( (t1 - t0) / 1000000 )) ms, serving again and every partition owned $(( ($(date +%s%N) - t1) / 1000000 )) ms later"
    done
    write_json
    echo "cluster in $dir upgraded: every server restarted in turn"
    ;;
  stop)
    pids=()
    for nd in "$dir"/node-*; do
      [ -f "$nd/server.pid" ] || continue
      pid=$(cat "$nd/server.pid")
      if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; pids+=("$pid"); fi
    done
    for pid in "${pids[@]}"; do
      for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    done
    pg_pid=$( [ -f "$dir/pg/postgres.env" ] && env_get "$dir/pg/postgres.env" pid || true)
    zk_pid=$( [ -f "$dir/zk/zookeeper.env" ] && env_get "$dir/zk/zookeeper.env" pid || true)
    [ -d "$dir/zk" ] && "$here/zookeeper.sh" stop --dir "$dir/zk" >/dev/null || true
    [ -d "$dir/pg" ] && "$here/postgres.sh" stop --dir "$dir/pg" >/dev/null || true
    # every process of the cluster was started in the background and left to the system's
    # reaper (PID 1) when its starter exited: a PID 1 that does not reap (a container started
    # without --init) keeps them defunct. They hold no port, file or memory, but say so
    sleep 0.3
    defunct=""
    for pid in "${pids[@]}" $pg_pid $zk_pid; do
      [ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" = Z ] && defunct="$defunct $pid"
    done
    if [ -n "$defunct" ]; then
      echo "cluster.sh: stopped, but process(es)$defunct stay defunct: their parent, PID 1 ($(ps -o comm= -p 1)), does not reap its children (in a container, start it with --init or tini); they hold nothing" >&2
    fi
    echo "cluster in $dir stopped"
    ;;
  status)
    for nd in "$dir"/node-*; do
      [ -f "$nd/port" ] || continue
      port=$(cat "$nd/port")
      if curl -sf "http://127.0.0.1:$port/observe/health" >/dev/null 2>&1; then s=up; else s=down; fi
      echo "$(basename "$nd") http://127.0.0.1:$port $s"
    done
    ;;
  *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; [ -z "$cmd" ] || [ "$cmd" = help ] || exit 2 ;;
esac
