#!/usr/bin/env bash
# kreports.sh - the debug-kernel lane's watch over each test (run-tests.sh
# calls it around every test when GAUDI_NIC_TEST_WATCH names it).
#
#   kreports.sh mark         before a test: remember where the kernel log is
#   kreports.sh check NAME   after it: TAP points for NAME, appended to its
#                            log and counted with its own results
#
# check fails the test for any report of the kernel's bug detectors that
# its run left in the kernel log (lockdep, KASAN, UBSAN, refcount and list
# corruption, sleeping in atomic context, RCU warnings and stalls, DEBUG_NET,
# DEBUG_OBJECTS, hung tasks: tests/lib/klog.sh's KLOG_DEBUG), and for any
# object kmemleak finds unreferenced afterwards.  kmemleak is scanned the
# way netdev's CI does it: scan, wait, scan.  Two scans because kmemleak
# reports an object only once its contents stayed the same from one scan
# to the next (the first scan of a new object only records its checksum);
# the wait lets what the test freed through RCU go.  Under TCG a scan of
# the debug guest takes about 12 s.  An object must also be older than
# kmemleak's minimum age (5 s), so a leak from a test's last seconds is
# reported after the next test (its backtrace still names its code).
# What was reported is cleared, so the next test starts from nothing.
# KREPORTS_KMEMLEAK=0 leaves kmemleak out (the canaries of other kinds).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/klog.sh
. "$here/../lib/klog.sh"
state=/tmp/gaudi_nic_kreports.mark
km=/sys/kernel/debug/kmemleak

kmemleak_ready() {
	[ -e "$km" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	[ -w "$km" ]
}

case "${1:-}" in
mark)
	dmesg | wc -l > "$state"
	;;
check)
	name=${2:?usage: kreports.sh check NAME}
	mark=$(cat "$state" 2>/dev/null || echo 0)
	since=$(dmesg | tail -n +"$((mark + 1))")
	bad=$(grep -E "$KLOG_DEBUG" <<<"$since")
	if [ -z "$bad" ]; then
		echo "ok - debug kernel: no detector report while $name ran"
	else
		echo "not ok - debug kernel: detector reports while $name ran"
		grep -E -A30 "$KLOG_DEBUG" <<<"$since" | head -n 120 | sed 's/^/# /'
	fi
	if [ "${KREPORTS_KMEMLEAK:-1}" = 0 ]; then
		:
	elif ! kmemleak_ready; then
		echo "not ok - debug kernel: kmemleak after $name # no $km: the kernel has no kmemleak"
	else
		t0=$(date +%s)
		echo scan > "$km"
		sleep "${KREPORTS_SETTLE:-2}"
		echo scan > "$km"
		leaks=$(cat "$km")
		t0=$(( $(date +%s) - t0 ))
		if [ -z "$leaks" ]; then
			echo "ok - debug kernel: kmemleak finds nothing unreferenced after $name (scans: ${t0}s)"
		else
			echo "not ok - debug kernel: kmemleak finds $(grep -c '^unreferenced object' <<<"$leaks") unreferenced objects after $name"
			head -n 200 <<<"$leaks" | sed 's/^/# /'
		fi
		echo clear > "$km"
	fi
	dmesg | wc -l > "$state"
	;;
*)
	echo "usage: kreports.sh mark | check NAME" >&2
	exit 2
	;;
esac
