#!/usr/bin/env bash
# The soak of cluster mode: the kill test (ClusterKillTest: 3 servers, PostgreSQL, ZooKeeper,
# the default session timeout of 6 s and probe interval of 200 ms, 24 workspaces under load) with N kills of the busiest server in one run,
# each followed by its restart and rebalance. Prints a line per kill (failover: kill -> first
# acknowledged write of each affected workspace) and the totals; the run fails on any lost or
# duplicated acknowledged write, any non-retriable client error, or a failover over 2 s.
#   scripts/cluster-soak.sh [N]       N kills (default 10); through the launcher: ./hypha cluster soak [N]
# Needs JAVA_HOME (a 21+ JDK) and Maven; MAVEN_OPTS may name a local repository. The full test
# output: modules/runtime/target/surefire-reports/*ClusterKillTest-output.txt; Maven's log:
# target/cluster-soak-maven.log.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10}
case "$n" in ''|*[!0-9]*) echo "cluster-soak.sh: N must be a number of kills, got '$n'" >&2; exit 2 ;; esac
[ "$n" -ge 1 ] || { echo "cluster-soak.sh: N must be at least 1" >&2; exit 2; }
out=modules/runtime/target/surefire-reports/io.hyphamesh.runtime.cluster.ClusterKillTest-output.txt
mkdir -p target
rm -f "$out"
started=$(date +%s)
echo "cluster soak: $n kills of the busiest of 3 servers (Maven log: target/cluster-soak-maven.log)"
mvn -B -Dstyle.color=never -pl modules/runtime -am package -Dtest=ClusterKillTest -Dsurefire.failIfNoSpecifiedTests=false \
  -Dcluster.kills="$n" >target/cluster-soak-maven.log 2>&1 &
mvn_pid=$!
# follow the test's own output while it runs
while kill -0 "$mvn_pid" 2>/dev/null && [ ! -f "$out" ]; do sleep 1; done
if [ -f "$out" ]; then
  tail -n +1 -F --pid="$mvn_pid" "$out" 2>/dev/null | grep --line-buffered -E '^(kill [0-9]|cluster soak:|failover )' || true
fi
set +e
wait "$mvn_pid"
rc=$?
set -e
took=$(( $(date +%s) - started ))
if [ "$rc" -ne 0 ]; then
  echo "cluster soak FAILED after $((took / 60)) min $((took % 60)) s; see target/cluster-soak-maven.log and"
  echo "  modules/runtime/target/surefire-reports/io.hyphamesh.runtime.cluster.ClusterKillTest.txt"
  grep -h -A3 '<<< FAILURE\|<<< ERROR' modules/runtime/target/surefire-reports/io.hyphamesh.runtime.cluster.ClusterKillTest.txt 2>/dev/null | head -20 || true
  exit 1
fi
echo "cluster soak passed: $n kills in $((took / 60)) min $((took % 60)) s"
