#!/usr/bin/env bash
# failnth.sh - the kernel side of the fail-nth tests (tests/rdma/fail_nth.sh,
# tests/accel/fail_nth.sh, tests/net/fail_nth.sh), sourced after a library
# that defines t_skip and tap_done.  The programs (tests/lib/failnth.h) arm
# /proc/thread-self/fail-nth; this tells failslab and fail_page_alloc to
# fail sleeping allocations too and to print nothing (their stack traces
# would read as warnings), and puts the knobs back on exit.

FN_DBG=/sys/kernel/debug
fn_saved=()
# fn_knob FILE VALUE: set a fault-injection knob, remembering its value
fn_knob() {
	fn_saved+=("$1=$(cat "$1")")
	echo "$2" > "$1"
}
fn_restore() {
	local kv
	for kv in "${fn_saved[@]}"; do echo "${kv#*=}" > "${kv%%=*}"; done
	fn_saved=()
}
# fn_setup WHAT: the knobs set, or (no fault injection in this kernel) a
# skipped point for WHAT, the TAP stream ended and the script exited
fn_setup() {
	local f
	grep -q " $FN_DBG debugfs" /proc/mounts || mount -t debugfs none "$FN_DBG" 2>/dev/null
	if [ ! -e /proc/self/fail-nth ] || [ ! -d "$FN_DBG/failslab" ]; then
		t_skip "$1" "this kernel has no fault injection (CONFIG_FAULT_INJECTION, FAILSLAB): the debug lane runs it"
		tap_done
		exit 0
	fi
	for f in failslab fail_page_alloc; do
		[ -d "$FN_DBG/$f" ] || continue
		fn_knob "$FN_DBG/$f/ignore-gfp-wait" N
		fn_knob "$FN_DBG/$f/verbose" 0
	done
}
# accel_mem ID: what gaudi_nic.ID holds for its users (allocations,
# exports, CPU mappings, open contexts, HBM in use), to compare before and
# after a program ran
accel_mem() {
	local a f out=
	a=/sys/bus/platform/devices/gaudi_nic.$1/gaudi_nic
	for f in mem_allocs mem_exports mem_mmaps mem_contexts hbm_used; do
		out+="$f $(cat "$a/$f" 2>/dev/null) "
	done
	echo "${out% }"
}
# fn_census: the devices, accel nodes, netdevs (every namespace) and
# ib_devices there are, to compare before and after
fn_census() {
	local ns nd=0
	for ns in $(ip netns list | awk '{print $1}'); do
		nd=$((nd + $(ip -n "$ns" -o link show | grep -c ': gn[0-9]*p[0-9]*[:@]')))
	done
	nd=$((nd + $(ip -o link show | grep -c ': gn[0-9]*p[0-9]*[:@]')))
	echo "devices $(ls -d /sys/bus/platform/devices/gaudi_nic.* 2>/dev/null | wc -l)" \
	     "accel $(ls /sys/class/accel 2>/dev/null | wc -l)" \
	     "netdevs $nd" \
	     "ib $(ls /sys/class/infiniband 2>/dev/null | wc -l)"
}
