#!/usr/bin/env bash
# canary.sh - the debug-kernel lane's proof that its watch can fail: for
# each kind of report the lane exists for, gaudi_nic_test_canary.ko causes
# one (a lockdep assertion on a mutex nobody holds, a leaked object, a
# UBSAN shift, a KASAN out-of-bounds read) and tests/vm/kreports.sh, run
# as it runs after every test, must report it as a failure.  Runs last in
# the lane: generic KASAN reports only the first bug of a boot, and the
# reports it causes stay in the kernel log (kreports.sh marks past them,
# so the watch around this test itself sees none), after a first point that
# nothing from the tests before is pending.  Output: TAP.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ko=${GAUDI_NIC_KMOD:-/build/kmod}/tests/kmod/gaudi_nic_test_canary.ko
watch=$here/kreports.sh
n=0 bad=0
# expect WHAT POINT BODY: the watch's output after the canary WHAT must
# hold a failed point matching POINT and, in what it shows, BODY
expect() {
	local what=$1 pat=$2 body=$3 out
	n=$((n + 1))
	"$watch" mark
	if ! insmod "$ko" what="$what"; then
		echo "not ok $n - canary $what: insmod $ko failed"; bad=1; return
	fi
	# checked while the module is loaded: its symbols name the culprit
	# a leak is reported once older than kmemleak's minimum age, 5 s; the
	# other kinds need no kmemleak scan
	# kmemleak misses an object while a stale copy of its pointer lives
	# in memory it scans (the loading task's freed stack, kept in the
	# stack cache, until it is reused): up to three checks, each of which
	# clears what it found, so that a late find is not blamed on the next
	# test.  One of these seen failing in CI, with the leak reported by
	# the next check.
	if [ "$what" = leak ]; then
		for try in 1 2 3; do
			out=$(KREPORTS_SETTLE=7 "$watch" check "canary-$what")
			grep -qE "^not ok .*$pat" <<<"$out" && break
			echo "# canary leak: not found by check $try of 3"
		done
	else
		out=$(KREPORTS_KMEMLEAK=0 "$watch" check "canary-$what")
	fi
	rmmod gaudi_nic_test_canary
	if grep -qE "^not ok .*$pat" <<<"$out" && grep -qE "$body" <<<"$out"; then
		echo "ok $n - the watch reports the canary's $what"
	else
		echo "not ok $n - the watch reports the canary's $what"
		sed 's/^/# /' <<<"$out"
		bad=1
	fi
}
echo "TAP version 13"
echo "1..5"
# First nothing may be pending: a leak of the tests before, too young for
# their own scan (kmemleak's minimum age is 5 s), would otherwise be
# cleared here as if it were a canary's.
n=$((n + 1))
sleep 6
out=$("$watch" check canary-baseline)
if grep -q '^not ok' <<<"$out"; then
	echo "not ok $n - nothing is pending before the canaries"
	sed 's/^/# /' <<<"$out"
	bad=1
else
	echo "ok $n - nothing is pending before the canaries"
fi
expect assert 'detector reports' 'WARNING: .*canary_fire'
expect leak 'kmemleak finds [1-9][0-9]* unreferenced' 'canary_fire'
expect ubsan 'detector reports' 'UBSAN: shift-out-of-bounds'
expect kasan 'detector reports' 'BUG: KASAN: slab-out-of-bounds'
exit $bad
