#!/usr/bin/env bash
# test-run-tests.sh - checks that the test runner counts honestly: passes,
# failures, skips, a crash after passing points, a timeout, a test that
# prints nothing, a whole-file skip, and tests in the background lane
# ("&NAME", up to a "wait" line).  Output: TAP.
set -u
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
n=0 bad=0
check() { # DESC EXPECTED ACTUAL
	n=$((n + 1))
	if [ "$2" = "$3" ]; then echo "ok $n - $1"; else echo "not ok $n - $1: expected '$2', got '$3'"; bad=1; fi
}
run() { # LISTTEXT -> counts
	printf '%s\n' "$1" > "$t/l.list"
	tools/testenv/run-tests.sh "$t/l.list" "$t/out" > "$t/tap" 2>&1
	cat "$t/out/counts"
}
echo "TAP version 13"
echo "1..14"
check "passes and skips counted"      "2 0 1" "$(run 'a 5 echo ok 1; echo ok 2; echo "ok 3 - x # SKIP no device"')"
check "not ok counted"                "1 1 0" "$(run 'a 5 echo ok 1; echo not ok 2')"
check "non-zero exit after passes"    "1 1 0" "$(run 'a 5 echo ok 1; exit 3')"
check "timeout is a failure"          "1 1 0" "$(run 'a 1 echo ok 1; sleep 30')"
check "silent test is a failure"      "0 1 0" "$(run 'a 5 true')"
check "whole-file skip"               "0 0 1" "$(run 'a 5 echo "1..0 # SKIP needs hardware"')"
check "indented subtests not counted" "1 0 0" "$(run 'a 5 echo "  ok 1 - sub"; echo ok 1 - top')"
check "several tests and comments"    "2 1 0" "$(run $'# c\na 5 echo ok 1\n\nb 5 echo ok 1; echo not ok 2')"
# "&a" runs beside b: a waits for a file b makes, so run one after the
# other it would time out
check "background test beside the next" "2 0 0" "$(run "&a 5 while [ ! -f $t/go ]; do sleep 0.1; done; echo ok 1
b 5 touch $t/go; echo ok 1")"
# the lane runs its tests one after another: b would time out waiting for
# a file that c, behind it in the lane, makes
rm -f "$t/go"
check "background lane runs in order" "2 1 0" "$(run "&a 5 sleep 0.5; echo ok 1
&b 2 while [ ! -f $t/go ]; do sleep 0.1; done; echo ok 1
&c 5 touch $t/go; echo ok 1")"
check "background failure counted, wait is no test" "1 1 0" "$(run $'&a 5 echo not ok 1\nwait\nb 5 echo ok 1')"
run $'&a 5 sleep 1; echo ok 1\nb 5 echo ok 1' >/dev/null
check "background test reported after the others" "1" \
	"$(grep -c '^ok 2 a (.*background lane)' "$t/tap")"
# kselftest_harness.h's KTAP: the plan first, diagnostics, "ok N
# fixture.test", a skip with its reason, the totals line
cat > "$t/ktap" <<'EOF2'
TAP version 13
1..3
#  RUN           f.a ...
ok 1 f.a
ok 2 f.b # SKIP no importer
not ok 3 f.c
# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0
EOF2
check "kselftest harness counted"     "1 1 1" "$(run "a 5 cat $t/ktap; exit 1")"
run 'a 5 echo ok 1; exit 3' >/dev/null
check "failure says why" "1" "$(grep -c 'not ok 1 a .*exited with status 3' "$t/tap")"
exit $bad
