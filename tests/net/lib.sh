#!/usr/bin/env bash
# lib.sh - environment of the network tests, sourced by tests/net/*.sh.
#
# Shaped like the kernel's NetDrvEpEnv (tools/testing/selftests/drivers/
# net/lib/py/env.py): a test sees one local interface $NETIF in network
# namespace $LOCAL_NS and its link partner $REMOTE_IFNAME in $REMOTE_NS,
# with addresses $LOCAL_V4/$REMOTE_V4 and $LOCAL_V6/$REMOTE_V6, and runs
# commands with `lcl CMD` / `rmt CMD`.  Nothing in a test depends on the
# ports being gaudi_nic ones, except where it checks gaudi_nic specifics.
#
# By default env_setup creates emulated device $GN_DEV with two ports,
# cables port 0 to port 1 (link_device), and moves port 0 into $LOCAL_NS,
# port 1 into $REMOTE_NS.  To point the tests at other ports instead, set
# NETIF, REMOTE_IFNAME, LOCAL_NS and REMOTE_NS before sourcing (the
# interfaces already in those namespaces and cabled): env_setup then only
# assigns addresses.
set -u

GN_KO=${GN_KO:-${GAUDI_NIC_KMOD:-/build/kmod}/drivers/accel/gaudi_nic/gaudi_nic.ko}
# the emulated ASIC, whose platform driver directory has the control files
GN_SIM_KO=${GN_SIM_KO:-${GAUDI_NIC_KMOD:-/build/kmod}/drivers/accel/gaudi_nic/sim/gaudi_nic_sim.ko}
GN_SYSFS=/sys/bus/platform/drivers/gaudi_nic_sim
GN_DEV=${GN_DEV:-20}
if [ -n "${NETIF:-}" ]; then
	GN_EXTERNAL=1
else
	GN_EXTERNAL=0
	NETIF=gn${GN_DEV}p0
	REMOTE_IFNAME=gn${GN_DEV}p1
	LOCAL_NS=gn-local-$GN_DEV
	REMOTE_NS=gn-remote-$GN_DEV
fi
LOCAL_V4=${LOCAL_V4:-192.0.2.1}
REMOTE_V4=${REMOTE_V4:-192.0.2.2}
LOCAL_V6=${LOCAL_V6:-2001:db8::1}
REMOTE_V6=${REMOTE_V6:-2001:db8::2}

lcl() { ip netns exec "$LOCAL_NS" "$@"; }
rmt() { ip netns exec "$REMOTE_NS" "$@"; }

# ---------------------------------------------------------------- TAP
# KTAP output through the kselftest library's helpers (ktap_helpers.sh from
# the root's Linux source), so the tests can move under
# tools/testing/selftests unchanged.  The helpers echo unquoted: the
# wrappers turn globbing off so a '*' in a description stays one.
# shellcheck source=/dev/null
. "${KTAP_HELPERS:-/opt/linux-src/tools/testing/selftests/kselftest/ktap_helpers.sh}"
tap_start() { ktap_print_header; }
tap_done() { ktap_print_totals; echo "1..$((KTAP_TESTNO - 1))"; }
# tap_env_start SETUP: start the TAP stream and run the environment setup
# function SETUP in this shell (it may set variables the test uses); if it
# fails, report its output and the kernel log's tail, and end the test.
tap_env_start() {
	local log
	log=$(mktemp)
	tap_start
	if ! "$1" >"$log" 2>&1; then
		t_fail "environment setup" "$(cat "$log")" "$(dmesg | tail -n 20)"
		rm -f "$log"
		tap_done
		exit 1
	fi
	rm -f "$log"
}
t_ok() { local -; set -f; ktap_test_pass "- $*"; }
t_fail() {
	local -
	set -f
	ktap_test_fail "- $1"
	shift
	[ $# -gt 0 ] && printf '%s\n' "$@" | head -n 30 | sed 's/^/# /'
	return 0
}
t_skip() {
	local -
	set -f
	__ktap_test ok "- $1" "SKIP $2"
	KTAP_CNT_SKIP=$((KTAP_CNT_SKIP + 1))
}
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
# t_check DESC CMD...: ok if CMD succeeds; its output is shown on failure
t_check() {
	local d=$1 out
	shift
	if out=$("$@" 2>&1); then t_ok "$d"; else t_fail "$d" "command: $*" "$out"; fi
}
# t_expect DESC EXPECTED ACTUAL
t_expect() {
	if [ "$2" = "$3" ]; then t_ok "$1"; else t_fail "$1" "expected: $2" "got: $3"; fi
}

# ------------------------------------------------------------ helpers
# carrier NS IF -> 1 or 0
# in_ns NS CMD...: run CMD in namespace NS ("init": the initial one)
in_ns() { local ns=$1; shift; if [ "$ns" = init ]; then "$@"; else ip netns exec "$ns" "$@"; fi; }
carrier() { in_ns "$1" cat "/sys/class/net/$2/carrier" 2>/dev/null || echo 0; }
# wait_carrier NS IF 0|1 [SECONDS]
wait_carrier() {
	local i
	for ((i = 0; i < ${4:-10} * 10; i++)); do
		[ "$(carrier "$1" "$2")" = "$3" ] && return 0
		sleep 0.1
	done
	return 1
}
ifindex() { in_ns "$1" cat "/sys/class/net/$2/ifindex"; }
nsfile() { if [ "$1" = init ]; then echo /proc/1/ns/net; else echo "/run/netns/$1"; fi; }
# ethtool_stat NS IF NAME (sum of the counters matching the regex NAME)
ethtool_stat() {
	in_ns "$1" ethtool -S "$2" | awk -v re="^ *$3:" '$0 ~ re { s += $2 } END { print s + 0 }'
}
# link_stat NS IF FIELD (rx_packets, tx_dropped, ... from sysfs)
link_stat() { in_ns "$1" cat "/sys/class/net/$2/statistics/$3"; }
# snmp NS PROTO FIELD: a /proc/net/snmp counter in that namespace
snmp() {
	ip netns exec "$1" awk -v p="$2:" -v f="$3" '
		$1 == p && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
		$1 == p && hdr { print $col[f]; exit }' /proc/net/snmp
}
# gn_link NS_A IF_A NS_B IF_B: cable two ports (netdevsim's format)
gn_link() {
	local fa fb ia ib rc
	ia=$(ifindex "$1" "$2") && ib=$(ifindex "$3" "$4") || return 1
	exec {fa}<"$(nsfile "$1")" {fb}<"$(nsfile "$3")"
	echo "$fa:$ia $fb:$ib" > "$GN_SYSFS/link_device"
	rc=$?
	exec {fa}<&- {fb}<&-
	return $rc
}
# bad_link DESC "WRITTEN" "LOG TEXT": writing WRITTEN to link_device must
# fail, and the kernel log must say LOG TEXT (a grep -E pattern)
bad_link() {
	local before err new
	before=$(dmesg | wc -l)
	if err=$(echo "$2" 2>&1 > "$GN_SYSFS/link_device"); then
		t_fail "$1: refused" "write of \"$2\" succeeded"
		return
	fi
	new=$(dmesg | tail -n +$((before + 1)))
	if grep -qE "$3" <<<"$new"; then
		t_ok "$1: refused (${err##*: }), log: $(grep -o "link_device: .*" <<<"$new" | head -n 1)"
	else
		t_fail "$1: refused with a clear message" "expected \"$3\" in:" "$new"
	fi
}
gn_unlink() {
	local fa ia rc
	ia=$(ifindex "$1" "$2") || return 1
	exec {fa}<"$(nsfile "$1")"
	echo "$fa:$ia" > "$GN_SYSFS/unlink_device"
	rc=$?
	exec {fa}<&-
	return $rc
}
# ko_insert NAME KO [PARAM...]: insmod KO unless module NAME is loaded.
# A test in the other lane may be loading it at the same moment: insmod
# then fails with "File exists", and this waits (10 s at most) for that
# load to finish
ko_insert() {
	local name=$1 ko=$2 err i
	shift 2
	grep -q "^$name " /proc/modules && return 0
	err=$(insmod "$ko" "$@" 2>&1) && return 0
	for ((i = 0; i < 100; i++)); do
		[ "$(cat "/sys/module/$name/initstate" 2>/dev/null)" = live ] &&
			return 0
		sleep 0.1
	done
	echo "$err" >&2
	return 1
}
# gn_load: the driver and the emulator (no devices yet), unless loaded
gn_load() {
	local dep
	if ! grep -q '^gaudi_nic ' /proc/modules; then
		# insmod does not resolve dependencies (drm is a module)
		for dep in $(modinfo -F depends "$GN_KO" | tr , ' '); do
			modprobe -q "$dep" || return 1
		done
		ko_insert gaudi_nic "$GN_KO" || return 1
	fi
	ko_insert gaudi_nic_sim "$GN_SIM_KO" num_devices=0
}
# gn_new_device ID [PORTS [HBM_MB]]: create a device and wait for its netdevs
gn_new_device() {
	local i
	echo "$1 ${2:-2}${3:+ $3}" > "$GN_SYSFS/new_device" || return 1
	for ((i = 0; i < 100; i++)); do
		[ -e "/sys/class/net/gn$1p$(( ${2:-2} - 1 ))" ] && return 0
		sleep 0.1
	done
	echo "netdevs of device $1 did not appear" >&2
	return 1
}
gn_del_device() { echo "$1" > "$GN_SYSFS/del_device"; }
# wait_listen NS PORT [PID]: until a TCP listener on PORT in NS, at most
# 60 s (a server on a loaded TCG guest took over 10 s to reach its
# listen()), and no longer than PID, the server, lives
wait_listen() {
	local i
	for ((i = 0; i < 600; i++)); do
		in_ns "$1" ss -Hltn "sport = :$2" | grep -q . && return 0
		[ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null && return 1
		sleep 0.1
	done
	return 1
}

# ---------------------------------------------------------- environment
env_addrs() {
	lcl ip addr add "$LOCAL_V4/24" dev "$NETIF"
	lcl ip addr add "$LOCAL_V6/64" dev "$NETIF" nodad
	rmt ip addr add "$REMOTE_V4/24" dev "$REMOTE_IFNAME"
	rmt ip addr add "$REMOTE_V6/64" dev "$REMOTE_IFNAME" nodad
}

env_setup() {
	if [ "$GN_EXTERNAL" = 1 ]; then
		env_addrs
		return
	fi
	gn_load || { echo "cannot load $GN_KO" >&2; return 1; }
	gn_new_device "$GN_DEV" 2 || return 1
	ip netns add "$LOCAL_NS" && ip netns add "$REMOTE_NS" || return 1
	lcl ip link set lo up
	rmt ip link set lo up
	ip link set "$NETIF" netns "$LOCAL_NS" || return 1
	ip link set "$REMOTE_IFNAME" netns "$REMOTE_NS" || return 1
	gn_link "$LOCAL_NS" "$NETIF" "$REMOTE_NS" "$REMOTE_IFNAME" || return 1
	env_addrs
	lcl ip link set "$NETIF" up
	rmt ip link set "$REMOTE_IFNAME" up
	wait_carrier "$LOCAL_NS" "$NETIF" 1 && wait_carrier "$REMOTE_NS" "$REMOTE_IFNAME" 1
}

env_cleanup() {
	[ "$GN_EXTERNAL" = 1 ] && return
	ip netns pids "$LOCAL_NS" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns pids "$REMOTE_NS" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del "$LOCAL_NS" 2>/dev/null
	ip netns del "$REMOTE_NS" 2>/dev/null
	[ -e "$GN_SYSFS/del_device" ] && gn_del_device "$GN_DEV" 2>/dev/null
	return 0
}
