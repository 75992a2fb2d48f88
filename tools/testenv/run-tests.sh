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
# "&NAME ..." runs a test in a second, background lane (see below).
# "meson PREFIX BUILDDIR" stands for the tests a Meson project registers
# with test(), each named PREFIX and its Meson name
# (tools/testenv/meson-list.py): the project's meson.build is their only
# registry.
#
# GAUDI_NIC_TEST_WATCH, if set, is a command run as "CMD mark" before each
# test and "CMD check NAME" after it; what check prints is appended to the
# test's log and counted with its results (the debug-kernel lane's
# tests/vm/kreports.sh).  A watch needs to know which test a kernel report
# belongs to, so with one every test runs in the foreground.
#
# Writes "PASSED FAILED SKIPPED" to RESULTDIR/counts and each test's raw
# output to RESULTDIR/NAME.log.  Exits 1 if anything failed.
set -uo pipefail
list=$1 out=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# cpu_ticks: "BUSY TOTAL" jiffies of all CPUs so far (idle and iowait are
# not busy); a test's share of busy time tells waiting from computing
cpu_ticks() {
	awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i
		print t - $5 - $6, t; exit }' /proc/stat
}
mkdir -p "$out"
: > "$out/counts"
cd /src || exit 1

if [ -d "$list" ]; then set -- "$list"/*.list; else set -- "$list"; fi
# the list's lines, a "meson" line replaced by the tests it stands for
expand() {
	local line
	while IFS= read -r line; do
		if [[ $line =~ ^meson[[:space:]]+([^[:space:]]+)[[:space:]]+([^[:space:]]+)[[:space:]]*$ ]]; then
			python3 "$here/meson-list.py" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
		else
			echo "$line"
		fi
	done
}
mapfile -t lines < <(cat "$@" 2>/dev/null | grep -v '^[[:space:]]*\(#\|$\)' | expand)
ntests=0
for line in "${lines[@]}"; do
	[[ $line =~ ^[[:space:]]*wait[[:space:]]*$ ]] || ntests=$((ntests + 1))
done

# run_one NAME TIMEOUT CMD: run one test; its output goes to NAME.log, its
# counts and what went wrong to NAME.res ("PASSED FAILED SKIPPED SECONDS
# CPU% WHY")
run_one() {
	local name=$1 tmo=$2 cmd=$3 log="$out/$1.log" start rc secs p s f why=""
	local busy0 tot0 busy1 tot1 cpu
	start=$(date +%s)
	read -r busy0 tot0 < <(cpu_ticks)
	[ -z "${GAUDI_NIC_TEST_WATCH:-}" ] || $GAUDI_NIC_TEST_WATCH mark
	timeout --kill-after=10 "$tmo" bash -c "$cmd" >"$log" 2>&1 </dev/null
	rc=$?
	[ -z "${GAUDI_NIC_TEST_WATCH:-}" ] ||
		$GAUDI_NIC_TEST_WATCH check "$name" >>"$log" 2>&1 </dev/null
	secs=$(( $(date +%s) - start ))
	read -r busy1 tot1 < <(cpu_ticks)
	cpu=$(( (busy1 - busy0) * 100 / (tot1 - tot0 > 0 ? tot1 - tot0 : 1) ))
	p=$(grep -cE '^ok ' "$log" | head -1)
	s=$(grep -ciE '^ok .*# *skip' "$log" | head -1)
	f=$(grep -cE '^not ok ' "$log" | head -1)
	p=$((p - s))
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
	echo "$p $f $s $secs $cpu $why" > "$out/$name.res"
}

# report NAME [NOTE]: its output, indented, and its top-level TAP line
pass=0 fail=0 skip=0 n=0
report() {
	local name=$1 note=${2:-} p f s secs cpu why
	read -r p f s secs cpu why < "$out/$name.res"
	n=$((n + 1))
	sed 's/^/  /' "$out/$name.log"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	if [ "$f" -gt 0 ]; then
		echo "not ok $n $name ($p passed, $f failed, $s skipped, ${secs}s, cpu ${cpu}%$note)${why:+: $why}"
	elif [ "$p" = 0 ] && [ "$s" -gt 0 ]; then
		echo "ok $n $name # SKIP ($s skipped, ${secs}s, cpu ${cpu}%$note)"
	else
		echo "ok $n $name ($p passed, $s skipped, ${secs}s, cpu ${cpu}%$note)"
	fi
}

# A line "&NAME TIMEOUT COMMAND" puts its test in the background lane: at
# the first such line after a "wait" line (or the start), a second lane
# starts and runs every "&" test up to the next "wait" (or the end of the
# lists) one after another, beside the tests of the foreground; at that
# "wait" the foreground waits for it, and its tests are reported.  Only
# tests that share nothing with their neighbours may go there: their own
# devices and namespaces, no module unloads, no timing-sensitive checks.
lane_pid="" lane_names=()
join_lane() {
	local b
	[ -n "$lane_pid" ] || return 0
	wait "$lane_pid"
	for b in "${lane_names[@]}"; do
		report "$b" ", background lane"
	done
	lane_pid="" lane_names=()
}
# start_lane I: the "&" tests from line I up to the next "wait"
start_lane() {
	local j line name tmo cmd specs=()
	for ((j = $1; j < ${#lines[@]}; j++)); do
		line=${lines[j]}
		[[ $line =~ ^[[:space:]]*wait[[:space:]]*$ ]] && break
		[[ $line == "&"* ]] || continue
		read -r name tmo cmd <<<"${line#&}"
		lane_names+=("$name")
		specs+=("$name" "$tmo" "$cmd")
	done
	echo "# background lane: ${lane_names[*]}"
	(
		for ((j = 0; j < ${#specs[@]}; j += 3)); do
			run_one "${specs[j]}" "${specs[j + 1]}" "${specs[j + 2]}"
		done
	) &
	lane_pid=$!
}
echo "TAP version 13"
echo "1..$ntests"
for ((i = 0; i < ${#lines[@]}; i++)); do
	line=${lines[i]}
	[ -z "${GAUDI_NIC_TEST_WATCH:-}" ] || line=${line#&}
	if [[ $line =~ ^[[:space:]]*wait[[:space:]]*$ ]]; then
		join_lane
	elif [[ $line == "&"* ]]; then
		[ -n "$lane_pid" ] || start_lane "$i"
	else
		read -r name tmo cmd <<<"$line"
		run_one "$name" "$tmo" "$cmd"
		report "$name"
	fi
done
join_lane
echo "$pass $fail $skip" > "$out/counts"
[ "$fail" = 0 ]
