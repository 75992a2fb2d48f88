#!/usr/bin/env bash
# faults.sh - reliability over a faulty cable: the per-port cable fault
# knobs (debugfs p<port>_fault_{drop,dup,reorder,corrupt}: one frame in N
# of those the port transmits, at random) under RC transfers with every
# byte checked (fault_xfer_test.c: WRITE, READ, SEND in both directions), each
# fault alone and all at once, and a receiving engine whose queue is too
# small (roce_rx_queue_max: drops, rx_dropped); the MAC's fault counters and the RoCE
# engine's recovery counters must show that faults happened and were
# recovered from.  Then a TCP transfer with a checksum of the bytes, bad
# knob input, knobs turned off under traffic, unlinking the cable and
# turning REORDER off while a frame is held back, and del_device with every
# fault active.  Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-36}
DEV_B=${DEV_B:-37}
. "$here/lib.sh"

QMAX_PARAM=/sys/module/gaudi_nic_sim/parameters/roce_rx_queue_max
QMAX=$(cat "$QMAX_PARAM" 2>/dev/null)
cleanup() {
	[ -w "$QMAX_PARAM" ] && echo "$QMAX" > "$QMAX_PARAM"
	rdma_env_cleanup
}
trap cleanup EXIT
tap_env_start rdma_env_setup
t_ok "environment: $IB_A ($NS_A) cabled to $IB_B ($NS_B)"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
DBG_A=/sys/kernel/debug/gaudi_nic_sim/gaudi_nic.$DEV_A
DBG_B=/sys/kernel/debug/gaudi_nic_sim/gaudi_nic.$DEV_B
KINDS="drop dup reorder corrupt"

bin=${FAULT_XFER:-/build/tests-rdma/fault_xfer_test}
need_test_bin fault_xfer_test "$bin"

# knobs SIDE drop dup reorder corrupt: port 0's four knobs (A or B), each
# "one frame in N at random" (1: every frame, 0: off)
knobs() {
	local dir=$DBG_A k v
	[ "$1" = B ] && dir=$DBG_B
	shift
	for k in $KINDS; do
		v=$1
		shift
		echo "$v" > "$dir/p0_fault_$k" || return 1
	done
}
declare -A FCNT=([drop]=dropped [dup]=duplicated [reorder]=reordered [corrupt]=corrupted)
# fault_sum KIND: the ethtool counter mac_fault_<KIND>ed of both ports
fault_sum() {
	echo $(( $(ethtool_stat "$NS_A" "$IF_A" "mac_fault_${FCNT[$1]}") +
		 $(ethtool_stat "$NS_B" "$IF_B" "mac_fault_${FCNT[$1]}") ))
}
# ibc IBDEV NAME: one RoCE port counter
ibc() {
	rdma statistic show link "$1/1" | tr -s ' ' '\n' |
		awk -v n="$2" 'p { print; exit } $0 == n { p = 1 }' | grep . || echo 0
}
IBC="retransmits local_ack_timeouts out_of_sequence duplicate_requests rx_icrc_errors seq_nak_received rx_dropped"
declare -A SNAP
snap() {
	local c
	for c in $IBC; do
		SNAP[$c]=$(( $(ibc "$IB_A" "$c") + $(ibc "$IB_B" "$c") ))
	done
	for c in $KINDS; do SNAP[f_$c]=$(fault_sum "$c"); done
}
# delta NAME: growth since snap (RoCE counters of both devices summed;
# f_KIND: the MAC fault counters)
declare -A D
deltas() {
	local c
	for c in $IBC; do
		D[$c]=$(( $(ibc "$IB_A" "$c") + $(ibc "$IB_B" "$c") - SNAP[$c] ))
	done
	for c in $KINDS; do D[f_$c]=$(( $(fault_sum "$c") - SNAP[f_$c] )); done
	# a loss is noticed by a sequence NAK or by a timeout
	D[nak_or_timeout]=$(( D[seq_nak_received] + D[local_ack_timeouts] ))
	DSTR=""
	for c in $KINDS; do DSTR+="fault_$c=${D[f_$c]} "; done
	for c in $IBC; do DSTR+="$c=${D[$c]} "; done
}

# xfer DESC NMSG SIZE DEPTH [OPS [DIRS]]: fault_xfer_test (a kselftest: one
# fault_xfer.OP_DIR.transfer per operation and direction); its KTAP lines
# become ours, DESC after each name
xfer() {
	local desc=$1
	shift
	ksft_relay fault_xfer_test " [$desc]" < <(timeout 300 "$bin" "$IB_A" "$GID_A" \
		"$IB_B" "$GID_B" "$@" 2>&1)
}

# expect_gt DESC NAME...: every named delta is > 0
expect_gt() {
	local desc=$1 c bad=""
	shift
	for c in "$@"; do [ "${D[$c]}" -gt 0 ] || bad+="$c "; done
	if [ -z "$bad" ]; then t_ok "$desc"; else t_fail "$desc" "zero: $bad" "$DSTR"; fi
}

# --- no fault: the reference, and the counters stay still
snap
xfer "no fault" 16 16384 8
deltas
diag "no fault: $DSTR"
t_expect "no fault counted without knobs" "0 0 0 0" \
	"${D[f_drop]} ${D[f_dup]} ${D[f_reorder]} ${D[f_corrupt]}"

# --- the ICRC insertion offload off: every frame's ICRC is computed by
# the sending engine and checked by the receiving one (corruption is
# caught the same way whatever the setting: a damaged frame is a copy
# whose ICRC was written before the damage)
ICRC_PARAM=/sys/module/gaudi_nic_sim/parameters/roce_icrc_offload
t_expect "roce_icrc_offload is on by default" Y "$(cat "$ICRC_PARAM")"
echo 0 > "$ICRC_PARAM"
snap
xfer "ICRC in software" 8 16384 8
echo 1 > "$ICRC_PARAM"
deltas
t_expect "ICRC in software: every frame checked good (rx_icrc_errors, retransmits)" \
	"0 0" "${D[rx_icrc_errors]} ${D[retransmits]}"

# --- a full receive queue: with room for 2 buffers (a train of up to 16
# frames takes one), the receiving engine drops what does not fit, as a
# NIC out of receive buffers does, and counts it in rx_dropped; the
# sender recovers (sequence NAK or timeout, go-back-N: slowly, as RoCE
# without a lossless fabric does, so the transfer is small)
t_expect "roce_rx_queue_max defaults to 16384" 16384 "$QMAX"
echo 2 > "$QMAX_PARAM"
snap
xfer "receive queue of 2" 4 65536 4 ws ab
echo "$QMAX" > "$QMAX_PARAM"
deltas
diag "receive queue of 2: $DSTR"
expect_gt "receive queue of 2: frames dropped (rx_dropped), then resent" \
	rx_dropped retransmits nak_or_timeout
snap
xfer "receive queue back to 16384" 4 65536 4 ws ab
deltas
t_expect "receive queue back to 16384: nothing dropped" 0 "${D[rx_dropped]}"

# --- each fault alone, on both ports (both directions of the cable)
declare -A EVERY=([drop]=13 [dup]=11 [reorder]=7 [corrupt]=17)
declare -A EXPECT=(
	[drop]="retransmits nak_or_timeout"
	[dup]="duplicate_requests"
	[reorder]="out_of_sequence"
	[corrupt]="rx_icrc_errors retransmits"
)
for k in $KINDS; do
	v=()
	for j in $KINDS; do [ "$j" = "$k" ] && v+=("${EVERY[$k]}") || v+=(0); done
	knobs A "${v[@]}" && knobs B "${v[@]}" || t_fail "set $k knobs"
	snap
	xfer "$k 1/${EVERY[$k]}" 24 16384 8
	knobs A 0 0 0 0
	knobs B 0 0 0 0
	deltas
	diag "$k 1/${EVERY[$k]}: $DSTR"
	expect_gt "$k: fault_$k counted, engine recovered (${EXPECT[$k]} > 0)" \
		"f_$k" ${EXPECT[$k]}
done

# --- everything at once, larger messages, both directions
knobs A 23 19 11 29 && knobs B 29 23 13 19 || t_fail "set all knobs"
snap
xfer "all faults" 24 65536 8
knobs A 0 0 0 0
knobs B 0 0 0 0
deltas
diag "all faults: $DSTR"
expect_gt "all faults: every fault counted, engine recovered" \
	f_drop f_dup f_reorder f_corrupt retransmits out_of_sequence \
	duplicate_requests rx_icrc_errors

# --- TCP over the faulty cable: 4 MiB, every byte checked
python_tcp() { # NS ROLE ...
	local ns=$1
	shift
	ip netns exec "$ns" python3 - "$@" <<'EOF'
import hashlib, os, socket, sys
role = sys.argv[1]
if role == "recv":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", 5201)); s.listen(1); s.settimeout(120)
    c, _ = s.accept(); c.settimeout(120); h = hashlib.sha256(); n = 0
    while True:
        b = c.recv(65536)
        if not b: break
        h.update(b); n += len(b)
    print(n, h.hexdigest())
else:
    data = os.urandom(4 << 20)
    s = socket.create_connection((sys.argv[2], 5201), timeout=120)
    s.sendall(data); s.close()
    print(len(data), hashlib.sha256(data).hexdigest())
EOF
}
csum0=$(snmp "$NS_A" Tcp InCsumErrors)
knobs A 50 37 31 43 && knobs B 50 37 31 43 || t_fail "set TCP knobs"
snap
python_tcp "$NS_A" recv >/tmp/gn-faults-recv.out 2>&1 &
rpid=$!
wait_listen "$NS_A" 5201
sent=$(python_tcp "$NS_B" send "$IP_A" 2>&1)
wait "$rpid"
got=$(cat /tmp/gn-faults-recv.out)
ping_out=$(ns_b ping -c 20 -i 0.05 -W 2 "$IP_A" 2>&1 | tail -n 2 | head -n 1)
knobs A 0 0 0 0
knobs B 0 0 0 0
deltas
csum1=$(snmp "$NS_A" Tcp InCsumErrors)
diag "TCP: sent '$sent', received '$got', InCsumErrors +$((csum1 - csum0)); $DSTR" "ping: $ping_out"
if [ -n "$sent" ] && [ "$sent" = "$got" ]; then
	t_ok "TCP 4 MiB through drop 1/50, dup, reorder, corrupt: same bytes"
else
	t_fail "TCP 4 MiB through drop 1/50, dup, reorder, corrupt: same bytes" "sent: $sent" "received: $got"
fi
expect_gt "TCP: every fault counted" f_drop f_dup f_reorder f_corrupt
if [ $((csum1 - csum0)) -gt 0 ]; then
	t_ok "TCP: corrupted segments caught by the checksum (InCsumErrors +$((csum1 - csum0)))"
else
	t_fail "TCP: corrupted segments caught by the checksum" "InCsumErrors $csum0 -> $csum1"
fi
t_check "ping through drop 1/50 gets replies" grep -q " [1-9][0-9]* received" <<<"$ping_out"

# --- bad input: refused, the knob keeps its value
f=$DBG_A/p0_fault_drop
echo 5 > "$f"
for bad in garbage -1 4294967296 99999999999999999999999 "12abc" ""; do
	if echo "$bad" > "$f" 2>/dev/null; then
		t_fail "p0_fault_drop refuses '$bad'"
	else
		t_expect "p0_fault_drop refuses '$bad', keeps 5" 5 "$(cat "$f")"
	fi
done
echo 0x10 > "$f" && t_expect "p0_fault_drop takes 0x10 (16)" 16 "$(cat "$f")"
echo 4294967295 > "$f" && t_expect "p0_fault_drop takes 4294967295" 4294967295 "$(cat "$f")"
echo 0 > "$f"
t_expect "all knobs read back 0 when off" "0 0 0 0 0 0 0 0" \
	"$(cat "$DBG_A"/p0_fault_{drop,dup,reorder,corrupt} "$DBG_B"/p0_fault_{drop,dup,reorder,corrupt} | tr '\n' ' ' | sed 's/ $//')"

# --- knobs turned off in the middle of transfers
knobs A 7 0 5 0 && knobs B 0 5 0 7
"$bin" "$IB_A" "$GID_A" "$IB_B" "$GID_B" 64 16384 8 ws >/tmp/gn-faults-mid.out 2>&1 &
xpid=$!
sleep 3
knobs A 0 0 0 0
knobs B 0 0 0 0
if timeout 300 tail --pid="$xpid" -f /dev/null && wait "$xpid"; then
	t_ok "transfers complete intact with the knobs turned off under them"
else
	t_fail "transfers complete intact with the knobs turned off under them" "$(cat /tmp/gn-faults-mid.out)"
fi
snap
xfer "after knobs off" 8 16384 8 w
deltas
t_expect "no fault counted once the knobs are off" "0 0 0 0" \
	"${D[f_drop]} ${D[f_dup]} ${D[f_reorder]} ${D[f_corrupt]}"

# --- a held-back frame: delivered when REORDER goes off, dropped when the
# cable is unlinked.  Keep other frames off the cable: static neighbours,
# no IPv6 (no ND/MLD), and no TCP socket of the test above still closing
# (a FIN or ACK the faulty cable lost is resent later, and would release
# the held frame).
tcp_open() { ss -N "$1" -Htn state connected exclude time-wait | grep -q .; }
for i in $(seq 100); do
	tcp_open "$NS_A" || tcp_open "$NS_B" || break
	sleep 0.2
done
tcp_open "$NS_A" || tcp_open "$NS_B" && diag "TCP sockets still closing:" "$(ss -N "$NS_A" -tan; ss -N "$NS_B" -tan)"
ns_a sysctl -qw "net.ipv6.conf.$IF_A.disable_ipv6=1"
ns_b sysctl -qw "net.ipv6.conf.$IF_B.disable_ipv6=1"
mac_a=$(ns_a cat "/sys/class/net/$IF_A/address")
mac_b=$(ns_b cat "/sys/class/net/$IF_B/address")
ns_a ip neigh replace "$IP_B" lladdr "$mac_b" dev "$IF_A" nud permanent
ns_b ip neigh replace "$IP_A" lladdr "$mac_a" dev "$IF_B" nud permanent
sleep 0.5
held_one() { # a single echo request from A, held back by REORDER 1
	echo 1 > "$DBG_A/p0_fault_reorder"
	ns_a ping -c 1 -W 1 "$IP_B" >/dev/null 2>&1
}
rx0=$(ethtool_stat "$NS_B" "$IF_B" mac_rx_frames)
snap
if held_one; then
	t_fail "REORDER 1: the only frame sent is held back (no reply)"
else
	t_ok "REORDER 1: the only frame sent is held back (no reply)"
fi
rx1=$(ethtool_stat "$NS_B" "$IF_B" mac_rx_frames)
echo 0 > "$DBG_A/p0_fault_reorder"
rx2=$(ethtool_stat "$NS_B" "$IF_B" mac_rx_frames)
deltas
t_expect "REORDER off delivers the held frame (peer rx +1, reordered +1)" \
	"0 1 1 0" "$((rx1 - rx0)) $((rx2 - rx1)) ${D[f_reorder]} ${D[f_drop]}"
snap
held_one
if gn_unlink "$NS_A" "$IF_A"; then t_ok "unlink the cable with a frame held back"; else t_fail "unlink the cable with a frame held back"; fi
deltas
t_expect "the held frame is freed and counted as dropped" "1 0" "${D[f_drop]} ${D[f_reorder]}"
echo 0 > "$DBG_A/p0_fault_reorder"
gn_link "$NS_A" "$IF_A" "$NS_B" "$IF_B" && wait_carrier "$NS_A" "$IF_A" 1
t_check "ping after relinking" ns_a ping -c 2 -i 0.2 -W 5 "$IP_B"

# --- del_device with every fault set and a frame held back, under traffic
knobs A 3 5 7 11 && knobs B 11 7 5 3
ns_b ping -f -c 100000 -W 1 "$IP_A" >/dev/null 2>&1 &
ppid=$!
sleep 1
held_one
t0=$(date +%s)
if gn_del_device "$DEV_A" && gn_del_device "$DEV_B"; then
	t_ok "del_device of both ends with faults set ($(( $(date +%s) - t0 )) s)"
else
	t_fail "del_device of both ends with faults set"
fi
kill "$ppid" 2>/dev/null
wait "$ppid" 2>/dev/null
dmesg_check
tap_done
