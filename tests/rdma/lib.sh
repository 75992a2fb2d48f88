#!/usr/bin/env bash
# lib.sh - environment of the RDMA tests (tests/rdma/*.sh), on top of the
# network tests' helpers: two emulated devices with one port each, port 0
# of device A in namespace $NS_A cabled to port 0 of device B in $NS_B,
# gaudi_ib loaded, the provider found through RDMAV_DRIVERS.
here_rdma=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here_rdma/../net/lib.sh"
. "$here_rdma/../lib/klog.sh"

GIB_KO=${GIB_KO:-${GAUDI_NIC_KMOD:-/build/kmod}/drivers/infiniband/hw/gaudi/gaudi_ib.ko}
export RDMAV_DRIVERS=${RDMAV_DRIVERS:-/build/prefix/lib/libibverbs/libgaudi}
DEV_A=${DEV_A:-30}
DEV_B=${DEV_B:-31}
IB_A=gaudi_$DEV_A
IB_B=gaudi_$DEV_B
IF_A=gn${DEV_A}p0
IF_B=gn${DEV_B}p0
NS_A=gr-a-$DEV_A
NS_B=gr-b-$DEV_B
IP_A=${IP_A:-192.0.2.1}
IP_B=${IP_B:-192.0.2.2}

ns_a() { ip netns exec "$NS_A" "$@"; }
ns_b() { ip netns exec "$NS_B" "$@"; }

gib_load() {
	modprobe -q ib_core && modprobe -q ib_uverbs || return 1
	gn_load || return 1
	ko_insert gaudi_ib "$GIB_KO"
}

# res_of DEV: the object counts of DEV in `rdma resource show` (pd, cq,
# qp, cm_id, mr, ctx, srq), to compare before and after a program ran
res_of() { rdma resource show | awk -v d="$1:" '$2 == d { $1 = $2 = ""; print }'; }

# res_back WHO DEV BEFORE: a point that DEV's resource counts are BEFORE
# (res_of) again, now that WHO has gone
res_back() {
	local now
	now=$(res_of "$2")
	if [ "$now" = "$3" ]; then
		t_ok "nothing $1 made is left on $2 ($now)"
	else
		t_fail "nothing $1 made is left on $2" "before: $3" "after: $now"
	fi
}

# need_test_bin NAME PATH: end the test (failed) unless the test program
# NAME, built by `make user` (tests/rdma/meson.build), is at PATH
need_test_bin() {
	[ -x "$2" ] && return 0
	t_fail "$1 binary" "$2 is missing: run 'make user' (or make) first"
	tap_done
	exit 1
}

# ksft_relay NAME [SUFFIX]: relay the KTAP on stdin of the kselftest
# program NAME (kselftest_harness.h: the plan first, then "ok N
# fixture.test", "ok N fixture.test # SKIP why", "not ok N ...") as this
# script's own points, renumbered, SUFFIX after each name; everything else
# as diagnostics.  A program that stops before its plan is done (a crash,
# a time-out) fails.
ksft_relay() {
	local line d why plan=-1 got=0
	while IFS= read -r line; do
		case "$line" in
		"TAP version"*) ;;
		1..*) plan=${line#1..}; plan=${plan%% *} ;;
		"ok "*"# SKIP"*)
			d=${line#ok [0-9]* }; why=${d#*# SKIP}
			t_skip "${d%% # SKIP*}${2:-}" "${why# }"; got=$((got + 1)) ;;
		"ok "*) d=${line#ok [0-9]* }; t_ok "${d#- }${2:-}"; got=$((got + 1)) ;;
		"not ok "*) d=${line#not ok [0-9]* }; t_fail "${d#- }${2:-}"; got=$((got + 1)) ;;
		*) diag "$line" ;;
		esac
	done
	if [ "$plan" -ge 0 ] && [ "$got" -lt "$plan" ]; then
		t_fail "$1 ran to its end${2:-}" "$got of its $plan tests reported"
	fi
	return 0
}

# gid_index IBDEV PORT ADDR: the GID table index of ::ffff:ADDR (IPv4) or
# of the IPv6 address ADDR
gid_index() {
	local want f
	if [[ $3 == *:* ]]; then
		want=$(python3 -c 'import ipaddress, sys; print(ipaddress.ip_address(sys.argv[1]).exploded)' "$3")
	else
		want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' $(tr . ' ' <<<"$3"))
	fi
	for ((i = 0; i < 50; i++)); do
		for f in /sys/class/infiniband/"$1"/ports/"$2"/gids/*; do
			# rxe lists each address twice, RoCE v1 first: take the v2 one
			if [ "$(cat "$f" 2>/dev/null)" = "$want" ] &&
			   [ "$(cat "${f%/gids/*}/gid_attrs/types/${f##*/}" 2>/dev/null)" = "RoCE v2" ]; then
				basename "$f"
				return 0
			fi
		done
		sleep 0.1
	done
	return 1
}

# ib_stats IBDEV PORT: the port's non-zero hardware counters on one line
ib_stats() {
	rdma statistic show link "$1/$2" 2>&1 | tr -s ' ' | sed 's/^link [^ ]* //'
}

# ib_counter IBDEV PORT NAME: one hardware counter of the port (0 if absent)
ib_counter() {
	ib_stats "$1" "$2" | tr ' ' '\n' | awk -v k="$3" 'p { v = $0; exit } $0 == k { p = 1 } END { print v + 0 }'
}

# dmesg_check [MARK]: ok unless the kernel logged trouble (KLOG_TROUBLE)
# after line MARK of dmesg (MARK=$(dmesg | wc -l) before; default: since boot)
dmesg_check() {
	local new
	new=$(dmesg | tail -n +"$((${1:-0} + 1))")
	if grep -qE "$KLOG_TROUBLE" <<<"$new"; then
		t_fail "no kernel warning" "$(grep -E -A5 "$KLOG_TROUBLE" <<<"$new" | head -n 30)"
	else
		t_ok "no kernel warning"
	fi
}

# ib_wait_active IBDEV PORT
ib_wait_active() {
	for ((i = 0; i < 100; i++)); do
		grep -q ACTIVE "/sys/class/infiniband/$1/ports/$2/state" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# rdma_port_up NS IF IP: port netdev IF, already in NS, addressed IP/24,
# at MTU $RDMA_MTU (else the default), up
rdma_port_up() {
	in_ns "$1" ip addr add "$3/24" dev "$2"
	if [ -n "${RDMA_MTU:-}" ]; then
		in_ns "$1" ip link set "$2" mtu "$RDMA_MTU" || return 1
	fi
	in_ns "$1" ip link set "$2" up
}

# rdma_env_setup: devices DEV_A and DEV_B (HBM: $RDMA_HBM_MB MiB, else the
# default), their netdevs in NS_A and NS_B, cabled, addressed, at MTU
# $RDMA_MTU (else the default), up, their ports ACTIVE; sets GID_A, GID_B
rdma_env_setup() {
	gib_load || { echo "cannot load the drivers" >&2; return 1; }
	gn_new_device "$DEV_A" 1 ${RDMA_HBM_MB:-} && gn_new_device "$DEV_B" 1 ${RDMA_HBM_MB:-} || return 1
	ip netns add "$NS_A" && ip netns add "$NS_B" || return 1
	ns_a ip link set lo up
	ns_b ip link set lo up
	ip link set "$IF_A" netns "$NS_A" && ip link set "$IF_B" netns "$NS_B" || return 1
	gn_link "$NS_A" "$IF_A" "$NS_B" "$IF_B" || return 1
	rdma_port_up "$NS_A" "$IF_A" "$IP_A" && rdma_port_up "$NS_B" "$IF_B" "$IP_B" || return 1
	wait_carrier "$NS_A" "$IF_A" 1 && wait_carrier "$NS_B" "$IF_B" 1 || return 1
	ib_wait_active "$IB_A" 1 && ib_wait_active "$IB_B" 1 || return 1
	GID_A=$(gid_index "$IB_A" 1 "$IP_A") && GID_B=$(gid_index "$IB_B" 1 "$IP_B")
}

rdma_env_cleanup() {
	ip netns pids "$NS_A" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns pids "$NS_B" 2>/dev/null | xargs -r kill 2>/dev/null
	sleep 0.2
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	gn_del_device "$DEV_A" 2>/dev/null
	gn_del_device "$DEV_B" 2>/dev/null
	return 0
}

# rerun_wanted VAR REGEX TEXT DESC WHY: true when TEXT matches REGEX (grep's
# basic syntax) and VAR, a count of reruns left, is above 0; it then says
# so on a diagnostic line and takes one off VAR, which the caller passes on
# to the rerun (as in VAR=N pair ...: the count lives for that call only).
rerun_wanted() {
	local left=${!1:-0}
	[ "$left" -gt 0 ] && grep -q -- "$2" <<<"$3" || return 1
	diag "$4: $5; running it again ($((left - 1)) more reruns allowed)"
	printf -v "$1" %d $((left - 1))
}

# pair DESC TIMEOUT SERVER_CMD... -- CLIENT_CMD...: run a server in NS_A and
# its client in NS_B (or in namespaces $PAIR_NS_S and $PAIR_NS_C, "init" for
# the initial one); ok if both exit 0.  PAIR_CALIB_RETRY=N runs the pair
# again, up to N times, when perftest reports a failed clock calibration.
pair() {
	local desc=$1 tmo=$2 srv=() cli=() out_s out_c rc_s rc_c
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	out_s=$(mktemp) out_c=$(mktemp)
	in_ns "${PAIR_NS_S:-$NS_A}" timeout "$tmo" "${srv[@]}" >"$out_s" 2>&1 &
	local spid=$!
	# perftest and the libibverbs examples listen on 18515
	wait_listen "${PAIR_NS_S:-$NS_A}" "${PAIR_PORT:-18515}" "$spid" || sleep 1
	in_ns "${PAIR_NS_C:-$NS_B}" timeout "$tmo" "${cli[@]}" >"$out_c" 2>&1
	rc_c=$?
	wait "$spid"
	rc_s=$?
	PAIR_OUT_S=$(cat "$out_s") PAIR_OUT_C=$(cat "$out_c")
	rm -f "$out_s" "$out_c"
	# perftest's cycle-counter calibration fails now and then under TCG:
	# it then ends with status 1 and no report, whatever the transfer did
	if rerun_wanted PAIR_CALIB_RETRY "Correlation coefficient r^2: .* < 0.9" \
			"$PAIR_OUT_S$PAIR_OUT_C" "$desc" \
			"perftest's clock calibration failed (r^2 < 0.9, no report)"; then
		pair "$desc" "$tmo" "${srv[@]}" -- "${cli[@]}"
		return
	fi
	if [ "$rc_s" = 0 ] && [ "$rc_c" = 0 ]; then
		t_ok "$desc"
	else
		t_fail "$desc" "server rc=$rc_s:" "$PAIR_OUT_S" "client rc=$rc_c:" "$PAIR_OUT_C"
	fi
}

# perftest's result line: bw_avg OUTPUT is the average MiB/s column,
# lat_typ OUTPUT the typical latency (us); is_meas VALUE is true for a real
# measurement (a number, not 0.00: inf and 0 are failed clock calibrations)
bw_avg() { awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+/ { v = $4 } END { print v }' <<<"$1"; }
lat_typ() { awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+/ { v = $5 } END { print v }' <<<"$1"; }
is_num() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }
is_meas() { is_num "$1" && [[ ! $1 =~ ^0+(\.0+)?$ ]]; }
