#!/usr/bin/env bash
# check.sh [--debug-only] - everything 'make check' runs, inside the test
# root: the VM tests in one guest boot and, beside the guest's first lists,
# the host tests (no VM); then the debug-kernel lane, a second guest on the
# debug kernel (make kmod-debug) running tests/vm-debug.d; then two guests
# at once, two machines on a wire (tests/vm2.d).  --debug-only
# (make check-debug) runs that lane alone.  Ends with the line
# "N passed, N failed[, N skipped]" and a non-zero status on any failure.
set -uo pipefail
cd /src
res=/build/results
rm -rf "$res"; mkdir -p "$res"
status=0

# debug_lane: the kernel-facing suites again on the debug kernel, each
# watched by tests/vm/kreports.sh (detector reports, kmemleak)
debug_lane() {
	local rel
	rel=$(cat /build/kmod-debug/.release 2>/dev/null) ||
		{ echo "not ok - debug-kernel lane: no debug kernel (make kmod-debug)"
		  echo "0 1 0" > "$res/vm-debug.counts.extra"; return 1; }
	echo "# debug-kernel lane: $rel (lockdep, KASAN, UBSAN, kmemleak, DEBUG_OBJECTS, DEBUG_NET), tests/vm-debug.d"
	GAUDI_NIC_VM_KVER=$rel GAUDI_NIC_VM_MEM=4G GAUDI_NIC_VM_LIMIT=3000 \
	GAUDI_NIC_VM_ENV="GAUDI_NIC_KMOD=/build/kmod-debug GAUDI_NIC_TEST_WATCH=/src/tests/vm/kreports.sh" \
		tools/testenv/vm.sh tests/vm-debug.d "$res/vm-debug" </dev/null && return 0
	[ -f "$res/vm-debug/finished" ] || echo "0 1 0" > "$res/vm-debug.counts.extra"
	return 1
}

# two_machines: the tests of tests/vm2.d on two guests joined by a wire
# (tools/testenv/vm2.sh), after the other lanes: never two guest runs at
# once beside them
two_machines() {
	echo "# two machines: two guests of one vCPU, their NICs joined by a wire, tests/vm2.d"
	tools/testenv/vm2.sh tests/vm2.d "$res/vm2" </dev/null
}

# failures: each failed test's failing points again, with the diagnostics
# under them (20 lines each at most), so that the end of the output, which
# is all a CI excerpt may keep, says what failed and why
failures() {
	local r name why nf
	echo "# failures, again:"
	for r in "$res"/*/*.res "$res"/*/*/*.res; do
		[ -e "$r" ] || continue
		read -r _ nf _ _ _ why < "$r"
		[ "${nf:-0}" -gt 0 ] || continue
		name=${r#"$res"/}; name=${name%.res}
		echo "# $name${why:+: $why}"
		awk '/^not ok / { n = 20 } n > 0 { print "#   " $0; n-- }' \
			"${r%.res}.log" | head -n 40
	done
}

# totals: the closing line over every lane's counts; the status
totals() {
	local p f s
	read -r p f s < <(cat "$res"/*/counts "$res"/*/*/counts "$res"/*.counts.extra \
		"$res"/*/*.counts.extra 2>/dev/null |
		awk '{ p += $1; f += $2; s += $3 } END { print p + 0, f + 0, s + 0 }')
	if [ "$f" -gt 0 ]; then
		failures
		echo "# per-test logs: build/results/{host,vm,vm-debug,vm2/node0,vm2/node1}/NAME.log; guest consoles: build/results/vm*.console.log, vm2.node*.log"
	fi
	[ "$f" = 0 ] || status=1
	if [ "$s" -gt 0 ]; then
		echo "$p passed, $f failed, $s skipped"
	else
		echo "$p passed, $f failed"
	fi
	exit "$status"
}

if [ "${1:-}" = --debug-only ]; then
	debug_lane || status=1
	totals
fi

# The guest boots first and the host tests run beside its first lists
# (accel and net keep one of the guest's two CPUs busy, so the host's
# second core is mostly free); its progress is shown after them.
echo "# VM tests (virtme-ng, TCG): booting the guest; its results follow the host tests"
tools/testenv/vm.sh tests/vm.d "$res/vm" >"$res/vm.out" 2>&1 </dev/null &
vmpid=$!
echo "# host tests (in the trixie root, no VM)"
tools/testenv/run-tests.sh tests/host.d "$res/host" || status=1

echo "# VM tests (virtme-ng, TCG)"
tail -n +1 --pid="$vmpid" -f "$res/vm.out"
if ! wait "$vmpid"; then
	status=1
	# A guest that never finished (crash, hang) counts as one more failure.
	[ -f "$res/vm/finished" ] || echo "0 1 0" > "$res/vm.counts.extra"
fi

debug_lane || status=1
two_machines || status=1
totals
