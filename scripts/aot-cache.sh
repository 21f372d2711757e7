#!/usr/bin/env bash
# The JVM's ahead-of-time cache of the server (JDK 25+: JEP 483 and 514), used by ./hypha serve and
# by the bench's servers: classes of Helidon, Derby, jclouds and ours come loaded and linked from
# the cache instead of being read, verified and linked at every start (measured: an empty data
# directory to a healthy /observe/health in 2.4 s instead of 4.4 s on 2 cores).
#
#   aot-cache.sh make JAR CACHE [JVM options...]   one training run of JAR, writes CACHE
#   aot-cache.sh flags JAR CACHE                   prints -XX:AOTCache=CACHE when it can be used
#
# A cache belongs to one JDK build and one jar: it is made again when the jar is newer. With a JDK
# older than 25, or HYPHA_AOT=off, there is no cache and the server starts as before. The training
# run is the server itself on a temporary data directory: started, asked for its health, a workspace
# and a token created, a file put and read back, a socket workload run against it (AotTraining), then
# stopped with SIGTERM (the JVM writes the cache as it exits). It needs nothing but bash (no curl): HTTP goes over bash's /dev/tcp.
set -euo pipefail

# the JDK the server runs on: JAVA_HOME's (as ./hypha and scripts/cluster.sh launch it), else PATH's
JAVA=java; [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ] && JAVA=$JAVA_HOME/bin/java

java_feature() {
  "$JAVA" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2; exit}' | cut -d. -f1
}

usable() { # JDK 25+ and not switched off
  [ "${HYPHA_AOT:-on}" != off ] && [ "$(java_feature)" -ge 25 ] 2>/dev/null
}

# http METHOD PORT PATH [TOKEN] [BODY]: prints the status code (HTTP/1.1, Connection: close)
http() {
  local method=$1 port=$2 path=$3 token=${4:-} body=${5:-} status
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  {
    printf '%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n' "$method" "$path"
    [ -n "$token" ] && printf 'Authorization: Bearer %s\r\n' "$token"
    printf 'Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' "${#body}" "$body"
  } >&3
  status=$(head -c 12 <&3 | awk '{print $2}')
  exec 3<&- 3>&-
  echo "$status"
}

make_cache() {
  local jar=$1 cache=$2; shift 2
  usable || { echo "aot-cache: skipped (JDK $(java_feature); needs 25+, or HYPHA_AOT=off)"; return 0; }
  # trained on the jar's absolute path: a cache trained on a relative one (and so on the manifest's
  # class path relative to it) makes JDK 25.0.3 fail at once ("sealing violation ... Unexpected exception
  # when loading aot-linked classes") when the server is then started from another directory
  jar="$(cd "$(dirname "$jar")" && pwd)/$(basename "$jar")"
  local dir; dir=$(mktemp -d "${TMPDIR:-/tmp}/hypha-aot.XXXXXX")
  local root="aot-training-$RANDOM$RANDOM" port pid ok=0
  for attempt in 1 2 3; do
    port=$(( 20000 + RANDOM % 12000 ))
    # classes only, no method profiles (AOTRecordTraining off): a server started with JDK 25.0.3's
    # training replay recompiled WsSocket.readFrame 120-150 times in 10 s of a reconnect storm, C2
    # alternating levels 2 and 4 for ever (DECISIONS.md); the profiles also made starts slower
    "$JAVA" "$@" -XX:+UnlockDiagnosticVMOptions -XX:-AOTRecordTraining -XX:AOTCacheOutput="$cache.tmp" \
      -jar "$jar" --host=127.0.0.1 --port="$port" \
      --data-dir="$dir/data" --root-token="$root" >"$dir/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 600); do
      kill -0 "$pid" 2>/dev/null || break
      if [ "$(http GET "$port" /observe/health 2>/dev/null)" = 200 ]; then ok=1; break; fi
      sleep 0.1
    done
    [ "$ok" = 1 ] && break
    kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
    grep -q 'already in use' "$dir/server.log" || break
  done
  if [ "$ok" != 1 ]; then
    echo "aot-cache: the training server did not come up; no cache (its log: $dir/server.log)" >&2
    rm -f "$cache.tmp"; return 0
  fi
  # the paths a start and a first user take: workspaces, tokens, objects, a file in and out, metrics
  http POST "$port" /v1/workspaces "$root" '{"name":"aot"}' >/dev/null || true
  http POST "$port" /v1/workspaces/aot/tokens "$root" '{"permission":"read_write","ttl_seconds":60}' >/dev/null || true
  http GET "$port" /v1/workspaces/aot/objects "$root" >/dev/null || true
  http PUT "$port" /v1/workspaces/aot/artifacts/files/a.json "$root" '{"aot":true}' >/dev/null || true
  http GET "$port" /v1/workspaces/aot/artifacts/files/a.json "$root" >/dev/null || true
  http GET "$port" /observe/metrics >/dev/null || true
  # and the socket path a restart's first minute takes (upgrades, hellos, appends, reads, subscriptions,
  # Doc operations, a batch, a burst), from a JVM of its own: without it a restarted server met its
  # first hundred sockets with classes to load and link (io.hyphamesh.runtime.AotTraining)
  "$JAVA" -cp "$jar" io.hyphamesh.runtime.AotTraining "$port" "$root" >"$dir/training.log" 2>&1 \
    || echo "aot-cache: the socket training did not complete; the cache covers less (log: $dir/training.log)" >&2
  kill -TERM "$pid"
  # the JVM writes the cache as it exits (JDK 25 assembles it in a second JVM): bounded, then given up
  for _ in $(seq 1 1200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid" 2>/dev/null || true
    echo "aot-cache: the training server did not stop within 120 s; no cache" >&2
    rm -f "$cache.tmp"
  fi
  wait "$pid" 2>/dev/null || true
  if [ -s "$cache.tmp" ]; then
    mv -f "$cache.tmp" "$cache"
    rm -rf "$dir"
    echo "aot-cache: wrote $cache ($(du -m "$cache" | cut -f1) MB)"
  else
    rm -f "$cache.tmp"
    echo "aot-cache: the JVM wrote no cache; the server starts without one (log: $dir/server.log)" >&2
  fi
}

case "${1:-}" in
  make) shift; make_cache "$@" ;;
  flags)
    jar=$2 cache=$3
    if usable && [ -s "$cache" ] && [ "$cache" -nt "$jar" ]; then echo "-XX:AOTCache=$cache"; fi
    ;;
  *) echo "usage: $0 make JAR CACHE [JVM options...] | flags JAR CACHE" >&2; exit 2 ;;
esac
