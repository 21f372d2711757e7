#!/usr/bin/env bash
# server.start: wall time from process start to the first 200 from /observe/health, on an empty
# data directory (issue 11's scenario). Usage: bench/server-start.sh [runs] [jar]
# Prints each run and the medians (wall time, and the server's CPU time until healthy), in ms. Needs a Java 21+ on PATH or JAVA_HOME, and curl.
set -euo pipefail
runs=${1:-5}
jar=${2:-modules/runtime/target/hypha-mesh.jar}
java_bin=${JAVA_HOME:+$JAVA_HOME/bin/}java
times=()
cpus=()
for i in $(seq 1 "$runs"); do
  dir=$(mktemp -d /tmp/hypha-start.XXXXXX)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  t0=$(date +%s%N)
  "$java_bin" -Dguice_bytecode_gen_option=DISABLED -XX:+UseParallelGC ${HYPHA_JAVA_OPTS:-} -jar "$jar" \
    --port="$port" --data-dir="$dir/data" >"$dir/log" 2>&1 &
  pid=$!
  until curl -sf -o /dev/null "http://127.0.0.1:$port/observe/health"; do
    if ! kill -0 "$pid" 2>/dev/null; then echo "server exited:"; cat "$dir/log"; exit 1; fi
    sleep 0.01
  done
  t1=$(date +%s%N)
  # CPU the server used until then (user + system, clock ticks of 1/100 s): comparable on a busy machine
  ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  ms=$(( (t1 - t0) / 1000000 ))
  times+=("$ms")
  cpus+=("$((ticks * 10))")
  echo "run $i: $ms ms wall, $((ticks * 10)) ms CPU"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
done
printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print "median wall: " a[int((NR+1)/2)] " ms (" NR " runs, min " a[1] ", max " a[NR] ")"}'
printf '%s\n' "${cpus[@]}" | sort -n | awk '{a[NR]=$1} END {print "median CPU: " a[int((NR+1)/2)] " ms (min " a[1] ", max " a[NR] ")"}'
