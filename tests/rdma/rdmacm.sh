#!/usr/bin/env bash
# rdmacm.sh - rdma_cm end to end (issue 14): rping (data validated),
# ucmatose with 64 connections, udaddy (UD through SIDR),
# rdma_server/rdma_client and perftest with -R (ib_send_lat, ib_write_bw),
# over IPv4 and IPv6, between gaudi_$DEV_A in $NS_A and gaudi_$DEV_B in
# $NS_B over a cable and with client and server on gaudi_$DEV_A's one port
# (loopback).  Then bad input and teardown: rdma_cm to an address nobody
# answers and to one behind a netdev without an RDMA device ends with a
# clear error in bounded time; a namespace deleted under a live rping;
# del_device while rping, ucmatose and udaddy are live (no oops, the
# processes do not hang) and the module unloads afterwards.
# RCM_DEV=rxe runs the same on rdma_rxe (loopback only; rcm_lib.sh).
# Counts are small to keep the guest time short: rping -C 10, ucmatose
# -c 64 -C 2, udaddy -c 2 -C 10, perftest -n 100/200.  Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-52}
DEV_B=${DEV_B:-53}
. "$here/rcm_lib.sh"
NODEV_NS=rcm-nodev-$DEV_A
NODEV_IF=rcmn$DEV_A

cleanup() {
	ip netns pids "$NODEV_NS" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del "$NODEV_NS" 2>/dev/null
	in_ns "$NS_B" ip link del "$NODEV_IF" 2>/dev/null
	rcm_cleanup
}
trap cleanup EXIT
tap_env_start rcm_setup
if [ "$CABLE" = 1 ]; then
	t_ok "environment: $IB_A ($IF_A in $NS_A, $IP_A, $IP6_A) cabled to $IB_B ($IF_B in $NS_B, $IP_B, $IP6_B)"
else
	t_ok "environment: $IB_A on $IF_A ($IP_A, $IP6_A), loopback only"
fi

# rdmacm_round TOPO FAM: every tool once in that topology and family
rdmacm_round() {
	local topo=$1 fam=$2 sd cd tag n v6=()
	topo_set "$topo" "$fam"
	# perftest resolves IPv4 only unless told (--ipv6-addr, no argument)
	[ "$fam" = 6 ] && v6=(--ipv6-addr)
	tag="$topo IPv$fam"
	sd=$IB_A cd=$IB_A
	[ "$topo" = cable ] && cd=$IB_B
	if [ "$topo" = cable ] && [ "$CABLE" != 1 ]; then
		t_skip "rdma_cm tools, $tag" "$RCM_DEV: no second device to cable (rxe refuses RC between two local netdevs)"
		return
	fi
	# rping: SEND/RECV plus RDMA READ and WRITE per round; -V compares
	# every ping's data, -v prints it
	cm_pair "rping -C 10 -V, $tag" 120 7174 "$SRV_NS" "$CLI_NS" \
		rping -s -a "$SRV_IP" -C 10 -V -- rping -c -a "$SRV_IP" -C 10 -V -v
	n=$(grep -c 'ping data: rdma-ping-' <<<"$CM_OUT_C")
	t_expect "rping -C 10, $tag: 10 pings of validated data printed" 10 "$n"
	cm_pair "ucmatose -c 64 -C 2, $tag" 300 7471 "$SRV_NS" "$CLI_NS" \
		ucmatose -b "$SRV_IP" -c 64 -C 2 -- ucmatose -s "$SRV_IP" -c 64 -C 2
	if grep -q 'data transfers complete' <<<"$CM_OUT_C" &&
	   ! grep -qi 'fail\|error' <<<"$CM_OUT_S$CM_OUT_C"; then
		t_ok "ucmatose, $tag: 64 connections transferred, no error printed"
	else
		t_fail "ucmatose, $tag: 64 connections transferred, no error printed" "$CM_OUT_S" "$CM_OUT_C"
	fi
	cm_pair "udaddy -c 2 -C 10 (UD through SIDR), $tag" 120 7174 "$SRV_NS" "$CLI_NS" \
		udaddy -b "$SRV_IP" -c 2 -C 10 -- udaddy -s "$SRV_IP" -c 2 -C 10
	if grep -q 'data transfers complete' <<<"$CM_OUT_S" &&
	   ! grep -qi 'fail\|error' <<<"$CM_OUT_S$CM_OUT_C"; then
		t_ok "udaddy, $tag: server received every message, no error printed"
	else
		t_fail "udaddy, $tag: server received every message, no error printed" "$CM_OUT_S" "$CM_OUT_C"
	fi
	cm_pair "rdma_server/rdma_client, $tag" 120 7471 "$SRV_NS" "$CLI_NS" \
		rdma_server -s "$SRV_IP" -- rdma_client -s "$SRV_IP"
	CM_REJECT_RETRY=2 cm_pair "ib_send_lat -R 8 B x 100, $tag" 120 18515 "$SRV_NS" "$CLI_NS" \
		ib_send_lat -R -F "${v6[@]}" -d "$sd" -s 8 -n 100 -- \
		ib_send_lat -R -F "${v6[@]}" -d "$cd" -s 8 -n 100 "$SRV_IP"
	diag "$(grep -E '^ *[0-9]+ +[0-9]+ ' <<<"$CM_OUT_C")"
	CM_REJECT_RETRY=2 cm_pair "ib_write_bw -R 64 KiB x 200, $tag" 120 18515 "$SRV_NS" "$CLI_NS" \
		ib_write_bw -R -F "${v6[@]}" -d "$sd" -s 65536 -n 200 -- \
		ib_write_bw -R -F "${v6[@]}" -d "$cd" -s 65536 -n 200 "$SRV_IP"
	diag "$(grep -E '^ *[0-9]+ +[0-9]+ ' <<<"$CM_OUT_C")"
}
for topo in cable loop; do
	for fam in 4 6; do
		rdmacm_round "$topo" "$fam"
	done
done
klog_clean "the rdma_cm tools"

# ---- bad input: an address nobody answers, an address without a device
# expect_cm_error DESC LIMIT PATTERN NS CMD...: CMD must fail within LIMIT
# seconds and print PATTERN
expect_cm_error() {
	local desc=$1 lim=$2 pat=$3 ns=$4 out rc t0 dt
	shift 4
	t0=$(date +%s.%N)
	out=$(in_ns "$ns" timeout $((lim + 30)) "$@" 2>&1)
	rc=$?
	dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	if [ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -qE "$pat" <<<"$out" &&
	   awk -v d="$dt" -v l="$lim" 'BEGIN { exit !(d <= l) }'; then
		t_ok "$desc: $(grep -E "$pat" <<<"$out" | head -n 1) (${dt} s)"
	else
		t_fail "$desc: an error matching '$pat' within $lim s" "rc=$rc after $dt s" "$out"
	fi
}
topo_set cable 4
CNS=$CLI_NS
[ "$CABLE" = 1 ] || CNS=$NS_A
# nobody has this address: ARP/ND gets no answer, address resolution fails
expect_cm_error "rping to an unused IPv4 address on the subnet" 20 \
	'ADDR_ERROR|ROUTE_ERROR|UNREACHABLE' "$CNS" rping -c -a "${IP_A%.*}.99" -C 1
expect_cm_error "rping to an unused IPv6 address on the subnet" 20 \
	'ADDR_ERROR|ROUTE_ERROR|UNREACHABLE' "$CNS" rping -c -a "${IP6_A%::*}::99" -C 1
expect_cm_error "ucmatose to an unused IPv4 address on the subnet" 20 \
	'ADDR_ERROR|ROUTE_ERROR|UNREACHABLE|error' "$CNS" ucmatose -s "${IP_A%.*}.99" -c 1 -C 1
# an answering host behind a veth, which has no RDMA device: -ENODEV
if ip netns add "$NODEV_NS" && in_ns "$CNS" ip link add "$NODEV_IF" type veth peer name "${NODEV_IF}p" &&
   in_ns "$CNS" ip link set "${NODEV_IF}p" netns "$NODEV_NS" &&
   in_ns "$CNS" ip addr add 198.51.100.1/24 dev "$NODEV_IF" && in_ns "$CNS" ip link set "$NODEV_IF" up &&
   ip -n "$NODEV_NS" addr add 198.51.100.2/24 dev "${NODEV_IF}p" && ip -n "$NODEV_NS" link set "${NODEV_IF}p" up; then
	in_ns "$CNS" ping -c 1 -W 5 198.51.100.2 >/dev/null 2>&1
	expect_cm_error "rping to an address behind a netdev without an RDMA device" 20 \
		'ADDR_ERROR.*-19|error -19|No such device' "$CNS" rping -c -a 198.51.100.2 -C 1
	expect_cm_error "udaddy to an address behind a netdev without an RDMA device" 20 \
		'ADDR_ERROR|error' "$CNS" udaddy -s 198.51.100.2 -c 1 -C 1
else
	t_fail "a veth to a host without an RDMA device"
fi
ip netns del "$NODEV_NS" 2>/dev/null
in_ns "$CNS" ip link del "$NODEV_IF" 2>/dev/null
klog_clean "the bad addresses"

# ---- teardown under live connections
# wait_exit PID SECONDS: WAIT_RC = its exit status, or "hung"
wait_exit() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		if ! kill -0 "$1" 2>/dev/null; then
			wait "$1"
			WAIT_RC=$?
			return
		fi
		sleep 0.1
	done
	WAIT_RC=hung
}
# kill_tree PID SIG: PID's descendants (the tool under in_ns and timeout),
# then PID
kill_tree() {
	local c
	for c in $(pgrep -P "$1"); do kill_tree "$c" "$2"; done
	kill -"$2" "$1" 2>/dev/null
}
# tree_stacks PID: the kernel stacks of PID's descendants
tree_stacks() {
	local c
	for c in $(pgrep -P "$1"); do
		echo "$c $(cat /proc/"$c"/comm 2>/dev/null): $(tr '\n' ' ' <"/proc/$c/stack" 2>/dev/null)"
		tree_stacks "$c"
	done
}
# cm_connected N: until N rdma_cm ids are connected (all namespaces); 60 s
cm_connected() {
	local i
	for ((i = 0; i < 600; i++)); do
		[ "$(rdma resource show cm_id 2>/dev/null | grep -c 'state CONNECT ')" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
tmp=$(mktemp -d)

# a namespace deleted under a live rping: its name goes (ip netns del), then
# its last process dies; the kernel tears the namespace down and moves the
# port netdev back to the initial namespace.  The peer's rping must notice
# (DISCONNECTED) and exit, nothing may oops, and the port must work again.
if [ "$CABLE" = 1 ]; then
	ns_a timeout 300 rping -s -a "$IP_A" -V >"$tmp/ns.s" 2>&1 &
	ps_=$!
	cm_wait_listen 7174
	ns_b timeout 300 rping -c -a "$IP_A" -V >"$tmp/ns.c" 2>&1 &
	pc_=$!
	if cm_connected 2; then
		t_ok "rping $IB_B -> $IB_A connected, running"
	else
		t_fail "rping $IB_B -> $IB_A connected, running" "$(cat "$tmp/ns.s" "$tmp/ns.c")"
	fi
	sleep 1
	# the processes in NS_B (the rping client and its timeout)
	nsp=$(ip netns pids "$NS_B")
	ip netns del "$NS_B"
	# shellcheck disable=SC2086
	kill -9 $nsp
	wait_exit "$pc_" 10
	wait_exit "$ps_" 60
	if [ "$WAIT_RC" != hung ]; then
		t_ok "rping's peer exits once the namespace is gone (status $WAIT_RC)"
	else
		t_fail "rping's peer exits once the namespace is gone" "$(tree_stacks "$ps_")" "$(tail -n 5 "$tmp/ns.s")"
		kill_tree "$ps_" 9
	fi
	diag "server: $(tr '\n' ' ' <"$tmp/ns.s" | tail -c 300)"
	for ((i = 0; i < 100; i++)); do
		[ -e "/sys/class/net/$IF_B" ] && break
		sleep 0.1
	done
	if [ -e "/sys/class/net/$IF_B" ]; then
		t_ok "$IF_B back in the initial namespace"
	else
		t_fail "$IF_B back in the initial namespace" "$(ip -br link)"
	fi
	klog_clean "deleting a namespace under a live rping"
	# the namespace again, and rping through it
	if ip netns add "$NS_B" && ns_b ip link set lo up && ip link set "$IF_B" netns "$NS_B" &&
	   ns_b ip addr add "$IP_B/24" dev "$IF_B" && ns_b ip addr add "$IP6_B/64" dev "$IF_B" nodad &&
	   ns_b ip link set "$IF_B" up && wait_carrier "$NS_B" "$IF_B" 1 && ib_wait_active "$IB_B" 1 &&
	   gid_index "$IB_B" 1 "$IP_B" >/dev/null; then
		t_ok "$IF_B in a new $NS_B"
	else
		t_fail "$IF_B in a new $NS_B"
	fi
	cm_pair "rping -C 10 -V through the new namespace" 120 7174 "$NS_A" "$NS_B" \
		rping -s -a "$IP_A" -C 10 -V -- rping -c -a "$IP_A" -C 10 -V
else
	t_skip "namespace deleted under a live rping" "$RCM_DEV: the device works only in the initial namespace"
fi

# del_device (rxe: rdma link del) while rping, ucmatose and udaddy are live
topo_set cable 4
[ "$CABLE" = 1 ] || topo_set loop 4
in_ns "$SRV_NS" timeout 300 rping -s -a "$SRV_IP" -V >"$tmp/rp.s" 2>&1 &
p1=$!
cm_wait_listen 7174
in_ns "$CLI_NS" timeout 300 rping -c -a "$SRV_IP" -V >"$tmp/rp.c" 2>&1 &
p2=$!
in_ns "$SRV_NS" timeout 300 ucmatose -b "$SRV_IP" -c 16 -C 4000 >"$tmp/uc.s" 2>&1 &
p3=$!
cm_wait_listen 7471
in_ns "$CLI_NS" timeout 300 ucmatose -s "$SRV_IP" -c 16 -C 4000 >"$tmp/uc.c" 2>&1 &
p4=$!
in_ns "$SRV_NS" timeout 300 udaddy -b "$SRV_IP" -c 4 -C 4000 >"$tmp/ud.s" 2>&1 &
p5=$!
sleep 1
in_ns "$CLI_NS" timeout 300 udaddy -s "$SRV_IP" -c 4 -C 4000 >"$tmp/ud.c" 2>&1 &
p6=$!
# udaddy's UD QPs exist once its address is resolved; its traffic follows
for ((i = 0; i < 300; i++)); do
	rdma resource show qp 2>/dev/null | grep -q 'type UD' && break
	sleep 0.1
done
if cm_connected 8 && rdma resource show qp 2>/dev/null | grep -q 'type UD'; then
	t_ok "rping, ucmatose and udaddy live ($(rdma resource show cm_id | grep -c 'state CONNECT ') connected ids)"
else
	t_fail "rping, ucmatose and udaddy live" "$(rdma resource show cm_id)" "$(tail -n 3 "$tmp"/*)"
fi
diag "$(rdma resource show qp 2>&1 | grep -c .) QPs: $(rdma resource show qp 2>&1 | awk '{ for (i = 1; i < NF; i++) if ($i == "type") print $(i + 1) }' | sort | uniq -c | tr '\n' ' ')"
# the removal runs beside the processes: rxe has no disassociate_ucontext,
# so its removal waits until every process has closed the device
if [ "$RCM_DEV" = rxe ]; then
	victim=$IB_A
	bash -c "rdma link del $IB_A; rc=\$?; date +%s.%N > $tmp/del.t; exit \$rc" >"$tmp/del" 2>&1 &
else
	victim=$IB_B
	bash -c "echo $DEV_B > $GN_SYSFS/del_device; rc=\$?; date +%s.%N > $tmp/del.t; exit \$rc" >"$tmp/del" 2>&1 &
fi
delp=$!
# the processes on the removed device get DEVICE_REMOVAL or errors and
# exit, or wait forever for events that will not come (ucmatose ignores
# DEVICE_REMOVAL; RC has no keepalive): after 20 s those get SIGTERM, and
# must then exit: none may be stuck in the kernel
names=(rping-server rping-client ucmatose-server ucmatose-client udaddy-server udaddy-client)
pids=("$p1" "$p2" "$p3" "$p4" "$p5" "$p6")
t0=$(date +%s) t0n=$(date +%s.%N)
for i in "${!pids[@]}"; do
	left=$((20 - ($(date +%s) - t0)))
	[ "$left" -lt 1 ] && left=1
	wait_exit "${pids[$i]}" "$left"
	st[$i]=$WAIT_RC
done
stuck=() rcs=
for i in "${!pids[@]}"; do
	if [ "${st[$i]}" = hung ]; then
		kill_tree "${pids[$i]}" TERM
		wait_exit "${pids[$i]}" 10
		if [ "$WAIT_RC" = hung ]; then
			stuck+=("${names[$i]}: $(tree_stacks "${pids[$i]}")")
			kill_tree "${pids[$i]}" 9
		fi
		st[$i]="SIGTERM->$WAIT_RC"
	fi
	rcs+="${names[$i]} ${st[$i]}; "
done
if [ ${#stuck[@]} = 0 ]; then
	t_ok "no process stuck after the removal of $victim (exit status: $rcs)"
else
	t_fail "no process stuck after the removal of $victim" "${stuck[@]}"
fi
wait_exit "$delp" 60
if [ "$WAIT_RC" = 0 ]; then
	t_ok "removal of $victim completed (in $(awk -v a="$t0n" -v b="$(cat "$tmp/del.t")" 'BEGIN { printf "%.1f", b - a }') s)"
else
	t_fail "removal of $victim completed" "status $WAIT_RC" "$(cat "$tmp/del")"
	kill -9 "$delp" 2>/dev/null
fi
for f in rp.s rp.c uc.s uc.c ud.s ud.c; do diag "$f: $(grep -iE 'error|fail|removal|disconnect' "$tmp/$f" | head -n 3 | tr '\n' ' ')"; done
t_expect "no QP left on $victim" "" "$(rdma resource show qp 2>/dev/null | grep -w "$victim")"
klog_clean "removing $victim under live rdma_cm connections"
# the driver module unloads afterwards (nothing leaked holds it)
if [ "$RCM_DEV" = rxe ]; then
	mod=rdma_rxe
	# other rxe devices (none of ours) keep it: then say so
	if rdma link show 2>/dev/null | grep -q 'rxe'; then
		t_skip "rmmod rdma_rxe" "other rxe links exist"
	else
		t_check "rmmod rdma_rxe after the removal" timeout 120 rmmod rdma_rxe
	fi
else
	mod=gaudi_ib
	t_check "rmmod gaudi_ib after the removal ($IB_A still exists)" timeout 120 rmmod gaudi_ib
	insmod "$GIB_KO"
	# (its port is down: its cable's other end went with $DEV_B)
	for ((i = 0; i < 100; i++)); do
		[ -e "/sys/class/infiniband/$IB_A" ] && break
		sleep 0.1
	done
	if [ -e "/sys/class/infiniband/$IB_A" ]; then
		t_ok "insmod gaudi_ib again: $IB_A back"
	else
		t_fail "insmod gaudi_ib again: $IB_A back" "$(ls /sys/class/infiniband)"
	fi
fi
klog_clean "unloading $mod"
rm -rf "$tmp"
tap_done
