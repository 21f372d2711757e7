#!/usr/bin/env bash
# Used by `./hypha test`: the Maven stage's progress filter and the test counts of JUnit XML reports.
#   test-report.sh progress          filters Maven's output (stdin) to one line per module and test class
#   test-report.sh count FILE...     prints "passed failed skipped" summed over JUnit XML reports
#   test-report.sh failed FILE...    prints "Class.method: message" for each failed test in them
set -uo pipefail

case "${1:-}" in
  progress)
    # Maven prints ANSI resets even with -Dstyle.color=never (jansi); strip them, then keep what a
    # reader follows: which module builds, each test class with its count and time, and errors.
    # mawk (Debian's awk) reads a pipe in blocks unless told it is interactive: lines would arrive late
    awk=(awk); if awk -W version 2>&1 | grep -q mawk; then awk=(awk -W interactive); fi
    sed -u 's/\x1b\[[0-9;]*m//g' | "${awk[@]}" '
      /^\[INFO\] Building .*\[[0-9]+\/[0-9]+\]/ {
        sub(/^\[INFO\] Building /, ""); printf "  %s\n", $0; fflush(); next }
      /Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+, Time elapsed: .* in / {
        cls = $0; sub(/.* in /, "", cls); n = split(cls, parts, "."); name = parts[n]
        t = $0; sub(/.*Time elapsed: /, "", t); sub(/ s.*/, "", t)
        # no count here: with classes running side by side Surefire gives a class the counts of its
        # neighbour (seen: "0 tests" for a class of 8); the counts per module come from the XML reports
        bad = ($0 ~ /FAILURE|ERROR/) ? "  FAILED" : ""
        # modules build side by side (-T 2): a class line may come after the header of another module,
        # so each names its module, from its package (io.hyphamesh.MODULE...)
        mod = (n >= 3 && parts[1] == "io" && parts[2] == "hyphamesh") ? parts[3] : ""
        printf "    %-12s %-50s %7.1f s%s\n", mod, name, t, bad; fflush(); next }
      /^\[ERROR\] (Failures|Errors|Tests run|  |COMPILATION|\/)/ { print "    " $0; fflush(); next }
      /^\[ERROR\] Failed to execute goal/ { print "    " $0; fflush(); next }
      /BUILD (SUCCESS|FAILURE)/ { print "  " $2 " " $3; fflush(); next }
    '
    ;;
  count)
    shift
    passed=0; failed=0; skipped=0
    for f in "$@"; do
      [ -f "$f" ] || continue
      head=$(grep -m1 -o '<testsuite [^>]*>' "$f") || continue
      attr() { printf '%s' "$head" | sed -n "s/.* $1=\"\([0-9]*\)\".*/\1/p"; }
      t=$(attr tests); e=$(attr errors); fl=$(attr failures); s=$(attr skipped)
      t=${t:-0}; e=${e:-0}; fl=${fl:-0}; s=${s:-0}
      failed=$((failed + e + fl)); skipped=$((skipped + s)); passed=$((passed + t - e - fl - s))
    done
    echo "$passed $failed $skipped"
    ;;
  failed)
    # prints "Class.method" for each failed or errored test case in the given JUnit XML reports
    shift
    for f in "$@"; do
      [ -f "$f" ] || continue
      grep -q -E '(failures|errors)="[1-9]' "$f" || continue
      awk '
        /<testcase / { name = $0; sub(/.* name="/, "", name); sub(/".*/, "", name)
                       cls = $0; sub(/.* classname="/, "", cls); sub(/".*/, "", cls); n = split(cls, p, "."); cls = p[n] }
        /<(failure|error)[ >]/ { msg = $0; sub(/.*message="/, "", msg); sub(/".*/, "", msg)
                       if (length(msg) > 160) msg = substr(msg, 1, 160) "..."
                       gsub(/&quot;/, "\"", msg); gsub(/&lt;/, "<", msg); gsub(/&gt;/, ">", msg); gsub(/&amp;/, "\&", msg)
                       print cls "." name ": " msg }
      ' "$f"
    done
    ;;
  *)
    echo "usage: $0 progress | count FILE... | failed FILE..." >&2; exit 2
    ;;
esac
