#!/usr/bin/env bash
# check.sh - everything 'make check' runs, inside the test root: the VM
# tests in one guest boot and, beside the guest's first lists, the host
# tests (no VM).  Ends with the line
# "N passed, N failed[, N skipped]" and a non-zero status on any failure.
set -uo pipefail
cd /src
res=/build/results
rm -rf "$res"; mkdir -p "$res"
status=0

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

read -r p f s < <(cat "$res"/*/counts "$res"/*.counts.extra 2>/dev/null |
	awk '{ p += $1; f += $2; s += $3 } END { print p + 0, f + 0, s + 0 }')
if [ "$f" -gt 0 ]; then
	echo "# per-test logs: build/results/{host,vm}/NAME.log; guest console: build/results/vm.console.log"
fi
[ "$f" = 0 ] || status=1
if [ "$s" -gt 0 ]; then
	echo "$p passed, $f failed, $s skipped"
else
	echo "$p passed, $f failed"
fi
exit "$status"
