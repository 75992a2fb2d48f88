#!/usr/bin/env bash
# run-tests.sh LIST RESULTDIR - run the tests named in LIST, kselftest style.
#
# LIST is a file, or a directory whose *.list files are read in name order.
# A list holds one test per line: "NAME TIMEOUT_SECONDS COMMAND...", run with
# bash from /src; blank lines and '#' comments are ignored.  A test prints
# TAP on stdout ("ok N desc", "not ok N desc", "... # SKIP why").  Its output
# is shown indented under one top-level TAP line per test.  A test that
# exits non-zero without reporting a failure, times out, or prints no test
# point at all counts as one failure: nothing passes by saying nothing.
#
# Writes "PASSED FAILED SKIPPED" to RESULTDIR/counts and each test's raw
# output to RESULTDIR/NAME.log.  Exits 1 if anything failed.
set -uo pipefail
list=$1 out=$2
mkdir -p "$out"
: > "$out/counts"
cd /src

if [ -d "$list" ]; then set -- "$list"/*.list; else set -- "$list"; fi
mapfile -t tests < <(cat "$@" 2>/dev/null | grep -v '^[[:space:]]*\(#\|$\)')
pass=0 fail=0 skip=0 n=0
echo "TAP version 13"
echo "1..${#tests[@]}"
for line in "${tests[@]}"; do
	read -r name tmo cmd <<<"$line"
	n=$((n + 1))
	log="$out/$name.log"
	start=$(date +%s)
	timeout --kill-after=10 "$tmo" bash -c "$cmd" >"$log" 2>&1 </dev/null
	rc=$?
	secs=$(( $(date +%s) - start ))
	sed 's/^/  /' "$log"
	p=$(grep -cE '^ok ' "$log" | head -1)
	s=$(grep -ciE '^ok .*# *skip' "$log" | head -1)
	f=$(grep -cE '^not ok ' "$log" | head -1)
	p=$((p - s))
	why=""
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		why="timed out after ${tmo}s"; f=$((f + 1))
	elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		why="exited with status $rc but reported no failure"; f=$((f + 1))
	elif [ $((p + s + f)) = 0 ]; then
		if grep -qiE '^1\.\.0 *# *skip' "$log"; then
			s=1
		else
			why="printed no test result"; f=1
		fi
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	if [ "$f" -gt 0 ]; then
		echo "not ok $n $name ($p passed, $f failed, $s skipped, ${secs}s)${why:+: $why}"
	elif [ "$p" = 0 ] && [ "$s" -gt 0 ]; then
		echo "ok $n $name # SKIP ($s skipped, ${secs}s)"
	else
		echo "ok $n $name ($p passed, $s skipped, ${secs}s)"
	fi
done
echo "$pass $fail $skip" > "$out/counts"
[ "$fail" = 0 ]
