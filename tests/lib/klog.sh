#!/usr/bin/env bash
# klog.sh - what counts as trouble in the kernel log, for every guest test
# that checks it.  Sourced; klog_clean needs t_ok and t_fail (tests/net/lib.sh).
#
# "general protection fault" then ':' or ',' is the kernel's own; a user
# process's ("traps: comm[pid] general protection fault ip:...") fails that
# process's test, not the kernel.
KLOG_TROUBLE='WARNING:|BUG:|Oops|general protection fault[:,]|KASAN|UBSAN|refcount_t:|list_add corruption|list_del corruption|Call Trace|unreferenced object'
# what the tests with RDMA users add: a task blocked in the kernel
KLOG_HUNG='INFO: task .* blocked'
# what the debug kernel's detectors add (tests/vm/kreports.sh): the ones
# above catch most ("BUG: KASAN", "BUG: sleeping function called from
# invalid context", "WARNING: possible circular locking dependency",
# "WARNING: suspicious RCU usage"); these are the reports that do not
# start that way: RCU stalls, lockups, DEBUG_OBJECTS, SLUB's poison and
# redzone checks ("BUG kmalloc-64 (...): Poison overwritten"), ref_tracker
KLOG_DEBUG="$KLOG_TROUBLE|$KLOG_HUNG|rcu: INFO|detected stalls? on|soft lockup|hard LOCKUP|ODEBUG:|BUG [a-zA-Z0-9_:()-]+ \\(|ref_tracker: .* has [0-9]+/[0-9]+ users"

# klog_mark: the log's length now; klog_since: the log after the mark
klog_mark() { KLOG_MARK=$(dmesg | wc -l); }
klog_since() { dmesg | tail -n +"$((${KLOG_MARK:-0} + 1))"; }

# klog_clean DESC [PATTERN]: ok if nothing matching PATTERN (default:
# trouble or a hung task) was logged since the mark; then mark again
klog_clean() {
	local pat=${2:-$KLOG_TROUBLE|$KLOG_HUNG} bad
	bad=$(klog_since | grep -E "$pat")
	if [ -z "$bad" ]; then
		t_ok "kernel log clean after $1"
	else
		t_fail "kernel log clean after $1" "$bad" \
			"$(klog_since | grep -E -A20 "$pat" | head -n 40)"
	fi
	klog_mark
}
