#!/usr/bin/env bash
# test-run-tests.sh - checks that the test runner counts honestly: passes,
# failures, skips, a crash after passing points, a timeout, a test that
# prints nothing, a whole-file skip, tests in the background lane
# ("&NAME", up to a "wait" line), the debug lane's watch
# (GAUDI_NIC_TEST_WATCH) around every test, and a "meson PREFIX BUILDDIR"
# line standing for a Meson project's test() registrations.  Output: TAP.
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
echo "1..21"
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
# The watch: "mark" before each test, "check NAME" after it; what check
# prints counts with the test, and every test runs in the foreground.
cat > "$t/watch" <<EOF2
#!/bin/bash
case \$1 in
mark) echo mark >> $t/watch.log ;;
check) echo "check \$2" >> $t/watch.log
       if [ "\$2" = b ]; then echo "not ok - report while \$2 ran"; else echo "ok - clean after \$2"; fi ;;
esac
EOF2
chmod +x "$t/watch"
watched() { # LISTTEXT -> counts
	printf '%s\n' "$1" > "$t/l.list"
	GAUDI_NIC_TEST_WATCH=$t/watch tools/testenv/run-tests.sh "$t/l.list" "$t/out" > "$t/tap" 2>&1
	cat "$t/out/counts"
}
check "the watch's points count with their test" "3 1 0" "$(watched $'a 5 echo ok 1\nb 5 echo ok 1')"
check "the watch marks before and checks after each test" "mark,check a,mark,check b" \
	"$(paste -sd, "$t/watch.log")"
check "a watch's failure fails its test" "1" "$(grep -c '^not ok 2 b ' "$t/tap")"
# with a watch, "&" tests run in the foreground, one after the other: b
# finds the file a makes at its end (beside it, in a lane, b would start
# before a made it)
rm -f "$t/go" "$t/watch.log"
check "with a watch, no background lane" "3 1 0" "$(watched "&a 5 sleep 1; touch $t/go; echo ok 1
b 5 if [ -f $t/go ]; then echo ok 1; else echo not ok 1; fi")"
# "meson PREFIX BUILDDIR": a project of two tests, one passing with an
# argument and an environment value that need quoting, one failing
mkdir -p "$t/p"
cat > "$t/p/meson.build" <<'EOF2'
project('runner-selftest', version : '1')
sh = find_program('sh')
test('one', sh, args : ['-c', 'echo ok 1; echo "ok 2 - $GN_X"', 'x y'],
  env : {'GN_X' : 'a  b'}, timeout : 5, suite : 's')
test('two', sh, args : ['-c', 'echo not ok 1'], timeout : 5, suite : 's')
EOF2
if meson setup "$t/b" "$t/p" > "$t/setup.log" 2>&1; then
	check "a meson line runs each registered test" "2 1 0" "$(run "meson m- $t/b")"
	check "... named PREFIX and its name, with its environment" "2" \
		"$(grep -c '^ok 1 m-one\|^  ok 2 - a  b$' "$t/tap")"
else
	check "meson setup of the runner's selftest project" "0" "1 ($(tail -n 1 "$t/setup.log"))"
	check "(not run: no project)" "" "x"
fi
check "a meson line without a build is a failure, not an empty list" "0 1 0" \
	"$(run "meson m- $t/none")"
exit $bad
