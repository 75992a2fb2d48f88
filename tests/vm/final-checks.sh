#!/usr/bin/env bash
# final-checks.sh - runs last in the guest, after every other VM test.
# Unloads our modules in dependency order (each unload must succeed: a
# module that cannot be unloaded is holding a reference it should not) and
# then checks that the kernel log of the whole boot holds no warning, oops or
# memory-safety report.  Output: KTAP, through the kselftest library's
# ktap_helpers.sh.
set -u
# shellcheck source=/dev/null
. "${KTAP_HELPERS:-/opt/linux-src/tools/testing/selftests/kselftest/ktap_helpers.sh}"
set -f	# the helpers echo unquoted
# gaudi_nic_sim last: the test importer imports its bus symbols
mods=(gaudi_nic_test_delay gaudi_nic_test_importer gaudi_ib gaudi_nic gaudi_nic_sim)
ktap_print_header
ktap_set_plan $(( ${#mods[@]} + 2 ))
# A module missing at the end fails: it never loaded, or a test took it
# away without saying so.  Only the modules a run list names in
# FINAL_CHECKS_UNLOADED may be missing.  By default that is the test
# importer: the tests that unload it on purpose (accel-unload,
# rdma-lifecycle) do not load it again.  The debug lane adds the delay
# module, which none of its tests loads.
unloaded=" ${FINAL_CHECKS_UNLOADED-gaudi_nic_test_importer} "
for m in "${mods[@]}"; do
	if ! grep -q "^$m " /proc/modules && [[ $unloaded == *" $m "* ]]; then
		# ktap_test_skip takes no reason
		__ktap_test ok "- unload $m" "SKIP not loaded at the end, as this run list expects (FINAL_CHECKS_UNLOADED)"
		KTAP_CNT_SKIP=$((KTAP_CNT_SKIP + 1))
	elif ! grep -q "^$m " /proc/modules; then
		ktap_test_fail "- unload $m: it is not loaded at the end of the run: it never loaded, or a test unloaded it (add it to FINAL_CHECKS_UNLOADED if on purpose)"
	elif err=$(rmmod "$m" 2>&1); then
		ktap_test_pass "- unload $m"
	else
		ktap_test_fail "- unload $m: $err"
		lsmod | sed 's/^/# /'
	fi
done
# shellcheck source=../lib/klog.sh
. "$(dirname "$0")/../lib/klog.sh"
# The tests mark the kernel log by its line count (dmesg | wc -l) and read
# what came after the mark.  That holds only while the ring buffer keeps
# the whole boot: once it wraps, the count stops growing and every later
# "what did the kernel say since" reads nothing.  The guests boot with
# log_buf_len=16M (tools/testenv/vm.sh) so that it does not; this proves it.
first=$(dmesg | head -n 1)
if [[ $first =~ ^\[\ *0\.0+\] ]]; then
	ktap_test_pass "- the kernel log holds the whole boot (first line at 0.000000, $(dmesg | wc -l) lines): every test's log marks were valid"
else
	ktap_test_fail "- the kernel log holds the whole boot: it wrapped, its first line is now: $first"
	echo "# the tests' dmesg marks (line counts) were invalid after the wrap: raise log_buf_len in tools/testenv/vm.sh"
fi
# kmemleak's own report line, not its start-up banner ("Kernel memory
# leak detector initialized"), which the debug kernel prints at every boot
pat="$KLOG_TROUBLE|kmemleak: .*suspected memory leak|page allocation failure"
if bad=$(dmesg | grep -E "$pat"); then
	ktap_test_fail "- kernel log is clean"
	echo "$bad" | head -n 20 | sed 's/^/# /'
	echo "# context:"
	dmesg | grep -E -B5 -A25 "$pat" | head -n 80 | sed 's/^/#   /'
else
	ktap_test_pass "- kernel log is clean ($(dmesg | wc -l) lines checked)"
fi
ktap_print_totals
