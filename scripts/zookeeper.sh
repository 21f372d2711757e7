#!/usr/bin/env bash
# A standalone ZooKeeper 3.9.5 server on loopback, in its own JVM, for tests, benches and
# `./hypha cluster start`.
#   scripts/zookeeper.sh start --dir DIR [--port N] [--tick MS]   prints connect=, port=, pid=, dir=
#   scripts/zookeeper.sh stop --dir DIR                           TERM, then KILL after 10 s
#   scripts/zookeeper.sh status --dir DIR                         exit 0 when it serves requests
# The class path comes from Maven (scripts/lib/zookeeper/pom.xml: zookeeper, metrics-core,
# snappy-java; resolved once into scripts/lib/zookeeper/target/lib, or HYPHA_ZK_LIB). Client port
# on 127.0.0.1 only (a free random port unless --port), no admin server; tickTime 250 ms by default,
# sessions of 1 s to 60 s accepted. The same KEY=VALUE lines go to DIR/zookeeper.env.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

die() { echo "zookeeper.sh: $*" >&2; exit 1; }

cmd=${1:-}; [ $# -gt 0 ] && shift
dir=""; port=""; tick=250
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --dir=*) dir=${1#--dir=}; shift ;;
    --port) port=$2; shift 2 ;;
    --port=*) port=${1#--port=}; shift ;;
    --tick) tick=$2; shift 2 ;;
    --tick=*) tick=${1#--tick=}; shift ;;
    *) die "unknown argument '$1'" ;;
  esac
done

java_bin() {
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then echo "$JAVA_HOME/bin/java"
  elif command -v java >/dev/null 2>&1; then command -v java
  else die "no java found (set JAVA_HOME)"; fi
}

lib_dir() { # the server's class path directory, resolved with Maven on first use
  local lib=${HYPHA_ZK_LIB:-$here/lib/zookeeper/target/lib}
  if [ ! -f "$lib/.complete" ]; then
    command -v mvn >/dev/null 2>&1 || die "no ZooKeeper class path at $lib and no mvn to resolve it"
    echo "zookeeper.sh: resolving the ZooKeeper class path with Maven..." >&2
    mvn -B -q -f "$here/lib/zookeeper/pom.xml" dependency:copy-dependencies -DoutputDirectory="$lib" >&2 \
      || die "mvn could not resolve the ZooKeeper class path"
    touch "$lib/.complete"
  fi
  echo "$lib"
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

our_pid() { # the pid in DIR/zookeeper.pid, when it is still our server
  local pid
  [ -f "$dir/zookeeper.pid" ] || return 1
  pid=$(cat "$dir/zookeeper.pid")
  [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q "QuorumPeerMain $dir/zoo.cfg" || return 1
  echo "$pid"
}

serves() { # a real request (write and read a znode), not just ruok: the trap CLUSTER.md records
  "$(java_bin)" -Xmx64m -cp "$1/*" -Dorg.slf4j.simpleLogger.defaultLogLevel=error \
    "$here/lib/zookeeper/ZkProbe.java" "127.0.0.1:$2" 2>/dev/null | grep -q '^served$'
}

case "$cmd" in
  start|stop|status)
    [ -n "$dir" ] || die "$cmd needs --dir DIR"
    mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
    case "$cmd" in
      status)
        pid=$(our_pid) || exit 1
        serves "$(lib_dir)" "$(sed -n 's/^clientPort=//p' "$dir/zoo.cfg")"
        ;;
      stop)
        if pid=$(our_pid); then
          kill -TERM "$pid" 2>/dev/null || true
          for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
          kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
        fi
        rm -f "$dir/zookeeper.pid"
        ;;
      start)
        lib=$(lib_dir)
        if ! pid=$(our_pid); then
          mkdir -p "$dir/data"
          # a random port below the kernel's ephemeral range (it starts at 32768 on Linux): one in that
          # range may become some process's outgoing connection between this check and ZooKeeper's bind
          low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
          [ "$low" -gt 21000 ] 2>/dev/null || low=32768
          fixed=$port
          for launch in 1 2 3; do
            tries=0
            while :; do
              p=${fixed:-$((20000 + RANDOM % (low - 20000)))}
              if port_free "$p"; then break; fi
              tries=$((tries + 1)); [ -z "$fixed" ] && [ $tries -lt 20 ] || die "port $p is taken"
            done
            port=$p
            cat > "$dir/zoo.cfg" <<CFG
tickTime=$tick
minSessionTimeout=1000
maxSessionTimeout=60000
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat,mntr
maxClientCnxns=0
CFG
            nohup "$(java_bin)" -Xmx256m -cp "$lib/*" -Dorg.slf4j.simpleLogger.defaultLogLevel=info \
              -Dzookeeper.jmx.log4j.disable=true org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg" \
              > "$dir/zookeeper.log" 2>&1 < /dev/null &
            pid=$!
            echo "$pid" > "$dir/zookeeper.pid"
            ok=""; lost=""
            for _ in $(seq 60); do
              if ! kill -0 "$pid" 2>/dev/null; then
                # its port was taken between the check and the bind: another port (unless one was asked for)
                if [ -z "$fixed" ] && [ "$launch" -lt 3 ] && grep -q 'Address already in use' "$dir/zookeeper.log"; then lost=1; break; fi
                die "ZooKeeper exited at start (see $dir/zookeeper.log)"
              fi
              if ! port_free "$port" && serves "$lib" "$port"; then ok=1; break; fi
              sleep 0.5
            done
            [ -n "$lost" ] && continue
            [ -n "$ok" ] || { kill -KILL "$pid" 2>/dev/null || true; die "ZooKeeper did not serve requests within 30 s (see $dir/zookeeper.log)"; }
            break
          done
        fi
        port=$(sed -n 's/^clientPort=//p' "$dir/zoo.cfg")
        {
          echo "connect=127.0.0.1:$port"
          echo "port=$port"
          echo "pid=$pid"
          echo "dir=$dir"
        } | tee "$dir/zookeeper.env"
        ;;
    esac
    ;;
  *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; [ -z "$cmd" ] || [ "$cmd" = help ] || exit 2 ;;
esac
