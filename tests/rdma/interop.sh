#!/usr/bin/env bash
# interop.sh - wire interoperability of the RoCE engine with rdma_rxe.
#
# gaudi_$DEV_A has its port netdev in namespace $NS_A (RoCE steering on, the
# engine answers); it is cabled to port 0 of device $DEV_B, whose netdev
# stays in the initial namespace with devlink param enable_roce off, so
# RoCE frames go up its netdev stack to an rdma_rxe device on it (6.12's
# rxe only listens in the initial namespace).  ibv_rc_pingpong (IPv4 and
# IPv6 GIDs, data sizes below, at and above the path MTU) and perftest run
# in both roles; rxe verifies our ICRC on every frame it accepts.  A
# capture on the rxe side is decoded by tshark (RoCE v2 opcodes, UDP port
# 4791, QPNs, PSN sequence, IP/UDP checksums) and the ICRC of every frame
# is recomputed (icrc_check.py).  Counters of both ends (rdma statistic,
# ethtool -S) are compared.  Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-36}
DEV_B=${DEV_B:-37}
. "$here/lib.sh"
RXE=rxe_gn$DEV_B
IP6_A=2001:db8:36::1
IP6_B=2001:db8:36::2
work=$(mktemp -d)
cap_pid=

interop_setup() {
	gib_load || { echo "cannot load the drivers"; return 1; }
	modprobe -q rdma_rxe || { echo "cannot load rdma_rxe"; return 1; }
	gn_new_device "$DEV_A" 1 && gn_new_device "$DEV_B" 1 || return 1
	devlink dev param set "platform/gaudi_nic.$DEV_B" name enable_roce \
		value false cmode runtime || return 1
	ip netns add "$NS_A" || return 1
	ns_a ip link set lo up
	ip link set "$IF_A" netns "$NS_A" || return 1
	gn_link "$NS_A" "$IF_A" init "$IF_B" || return 1
	ns_a ip addr add "$IP_A/24" dev "$IF_A"
	ns_a ip addr add "$IP6_A/64" dev "$IF_A" nodad
	ip addr add "$IP_B/24" dev "$IF_B"
	ip addr add "$IP6_B/64" dev "$IF_B" nodad
	# rxe's frames arrive through an RX ring, without flow control: a
	# ring smaller than our requester's window (512 packets) could
	# overflow while NAPI catches up, a loss the test must not see
	ethtool -G "$IF_B" rx 4096 || return 1
	ns_a ip link set "$IF_A" up
	ip link set "$IF_B" up
	wait_carrier "$NS_A" "$IF_A" 1 && wait_carrier init "$IF_B" 1 || return 1
	rdma link add "$RXE" type rxe netdev "$IF_B" || return 1
	ib_wait_active "$IB_A" 1 && ib_wait_active "$RXE" 1 || return 1
	GID_A=$(gid_index "$IB_A" 1 "$IP_A") && GID_B=$(gid_index "$RXE" 1 "$IP_B") &&
	GID6_A=$(gid_index "$IB_A" 1 "$IP6_A") && GID6_B=$(gid_index "$RXE" 1 "$IP6_B")
}

interop_cleanup() {
	[ -n "$cap_pid" ] && kill "$cap_pid" 2>/dev/null
	ip netns pids "$NS_A" 2>/dev/null | xargs -r kill 2>/dev/null
	sleep 0.2
	rdma link del "$RXE" 2>/dev/null
	ip netns del "$NS_A" 2>/dev/null
	gn_del_device "$DEV_A" 2>/dev/null
	gn_del_device "$DEV_B" 2>/dev/null
	rm -rf "$work"
	return 0
}

trap interop_cleanup EXIT
tap_env_start interop_setup
t_ok "environment: $IB_A ($IF_A in $NS_A) cabled to $RXE ($IF_B, initial namespace, enable_roce off), gids $GID_A/$GID_B, IPv6 $GID6_A/$GID6_B"

# RDMAV_DRIVERS (lib.sh) adds our provider to the ones of
# /etc/libibverbs.d; it does not replace them, so rxe's is still loaded
devs=$(ibv_devices 2>&1)
if grep -qw "$IB_A" <<<"$devs" && grep -qw "$RXE" <<<"$devs"; then
	t_ok "one process sees $IB_A (RDMAV_DRIVERS) and $RXE (/etc/libibverbs.d)"
else
	t_fail "one process sees $IB_A (RDMAV_DRIVERS) and $RXE (/etc/libibverbs.d)" "$devs"
fi
t_expect "$IB_A gid $GID_A is RoCE v2" "RoCE v2" "$(cat /sys/class/infiniband/$IB_A/ports/1/gid_attrs/types/$GID_A)"
t_expect "$RXE gid $GID_B is RoCE v2" "RoCE v2" "$(cat /sys/class/infiniband/$RXE/ports/1/gid_attrs/types/$GID_B)"

# snap: the counters of both ends and of both netdevs
snap() {
	local p=$1
	eval "${p}_gtx=$(ib_counter "$IB_A" 1 tx_packets) ${p}_grx=$(ib_counter "$IB_A" 1 rx_packets)"
	eval "${p}_rtx=$(ib_counter "$RXE" 1 sent_pkts) ${p}_rrx=$(ib_counter "$RXE" 1 rcvd_pkts)"
	eval "${p}_ertx=$(ethtool_stat "$NS_A" "$IF_A" roce_tx_frames) ${p}_errx=$(ethtool_stat "$NS_A" "$IF_A" roce_rx_frames)"
	eval "${p}_enrx=$(ethtool_stat "$NS_A" "$IF_A" 'rx[0-9]+_packets') ${p}_brrx=$(ethtool_stat init "$IF_B" roce_rx_frames)"
	eval "${p}_bnrx=$(ethtool_stat init "$IF_B" 'rx[0-9]+_packets')"
	eval "${p}_bnob=$(ethtool_stat init "$IF_B" mac_rx_no_buffer)"
}

# gaudi_srv DESC TMO ARGS...: $IB_A serves, $RXE is the client; rxe_srv:
# the reverse.  ARGS go to both ends; GIDs per $FAMILY (4 or 6).
gaudi_srv() {
	local d=$1 t=$2 ga=$GID_A gb=$GID_B addr=$IP_A
	shift 2
	[ "${FAMILY:-4}" = 6 ] && ga=$GID6_A gb=$GID6_B
	PAIR_NS_S=$NS_A PAIR_NS_C=init pair "$d: $IB_A server, $RXE client" "$t" \
		"$@" -d "$IB_A" "${GIDOPT:--g}" "$ga" -- "$@" -d "$RXE" "${GIDOPT:--g}" "$gb" "$addr"
}
rxe_srv() {
	local d=$1 t=$2 ga=$GID_A gb=$GID_B addr=$IP_B
	shift 2
	[ "${FAMILY:-4}" = 6 ] && ga=$GID6_A gb=$GID6_B
	PAIR_NS_S=init PAIR_NS_C=$NS_A pair "$d: $RXE server, $IB_A client" "$t" \
		"$@" -d "$RXE" "${GIDOPT:--g}" "$gb" -- "$@" -d "$IB_A" "${GIDOPT:--g}" "$ga" "$addr"
}
# pp_addr OUT local|remote QPN|PSN: a field of ibv_rc_pingpong's address lines
pp_addr() { sed -n "s/.*$2 address:.*$3 0x\([0-9a-f]*\).*/\1/p" <<<"$1" | head -n 1; }

# ---- captured rounds: small, so that every frame is decoded
snap s0
dumpcap -q -P -i "$IF_B" -f 'udp port 4791' -w "$work/roce.pcap" 2>"$work/dumpcap.log" &
cap_pid=$!
for ((i = 0; i < 50; i++)); do
	grep -q "Capturing on" "$work/dumpcap.log" 2>/dev/null && break
	sleep 0.2
done
gaudi_srv "ibv_rc_pingpong 512 B x 5 (SEND Only)" 120 ibv_rc_pingpong -c -s 512 -n 5
pp1=$PAIR_OUT_S
gaudi_srv "ibv_rc_pingpong 4000 B x 5 (SEND First/Middle/Last)" 120 ibv_rc_pingpong -c -s 4000 -n 5
GIDOPT=-x rxe_srv "ib_write_bw 4 KiB x 20 (WRITE First/Middle/Last)" 120 ib_write_bw -F -s 4096 -n 20
GIDOPT=-x gaudi_srv "ib_read_bw 4 KiB x 20 (READ Response First/Middle/Last)" 120 ib_read_bw -F -o 16 -s 4096 -n 20
FAMILY=6 gaudi_srv "ibv_rc_pingpong IPv6 4000 B x 5" 120 ibv_rc_pingpong -c -s 4000 -n 5
sleep 1
kill "$cap_pid"
wait "$cap_pid" 2>/dev/null
cap_pid=

# tshark: every UDP 4791 frame decodes as InfiniBand BTH; field dump
tsh() { tshark -r "$work/roce.pcap" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE "$@" 2>"$work/tshark.err"; }
tsh -T fields -E separator=, -e frame.number -e ip.src -e ipv6.src -e udp.dstport \
	-e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn \
	-e ip.checksum.status -e udp.checksum.status -e udp.checksum \
	-e infiniband.reth.dmalen >"$work/fields"
nframes=$(wc -l <"$work/fields")
nib=$(awk -F, '$5 != ""' "$work/fields" | wc -l)
diag "capture: $nframes frames, $nib decoded as InfiniBand; tshark says:" "$(tsh | head -n 12)"
if [ "$nframes" -gt 0 ] && [ "$nib" = "$nframes" ]; then
	t_ok "tshark decodes all $nframes UDP 4791 frames as RoCE v2 (InfiniBand BTH)"
else
	t_fail "tshark decodes all $nframes UDP 4791 frames as RoCE v2 (InfiniBand BTH)" \
		"$nib decoded" "$(cat "$work/tshark.err")" "$(head -n 5 "$work/fields")"
fi
ourf="(ip.src == $IP_A || ipv6.src == $IP6_A)"
mal=$(tsh -Y "(_ws.malformed || _ws.expert.severity >= error) && $ourf" -T fields -e frame.number -e _ws.col.Info -e _ws.expert.message | head -n 5)
t_expect "no malformed frame or expert error in our frames" "" "$mal"
# rxe's own frames are captured before its UDP checksum is filled in (TX
# checksum offload), which tshark reports as bad: shown, not counted
diag "expert errors in rxe's frames (TX checksum offload): $(tsh -Y "_ws.expert.severity >= error && !$ourf" | wc -l)"

# the opcodes our engine sent (from $IP_A / $IP6_A)
ours() { awk -F, -v a="$IP_A" -v b="$IP6_A" '$2 == a || $3 == b' "$work/fields"; }
theirs() { awk -F, -v a="$IP_B" -v b="$IP6_B" '$2 == a || $3 == b' "$work/fields"; }
have_op() { # DESC OPCODE SOURCE
	local n
	n=$($3 | awk -F, -v o="$2" '$5 == o' | wc -l)
	if [ "$n" -gt 0 ]; then t_ok "$1 ($n frames)"; else t_fail "$1" "opcodes seen: $($3 | cut -d, -f5 | sort -n | uniq -c | tr '\n' ' ')"; fi
}
have_op "ours: RC SEND Only (4)" 4 ours
have_op "ours: RC SEND First (0)" 0 ours
have_op "ours: RC SEND Middle (1)" 1 ours
have_op "ours: RC SEND Last (2)" 2 ours
have_op "ours: RC RDMA WRITE First (6)" 6 ours
have_op "ours: RC RDMA WRITE Middle (7)" 7 ours
have_op "ours: RC RDMA WRITE Last (8)" 8 ours
have_op "ours: RC RDMA READ Response First (13)" 13 ours
have_op "ours: RC RDMA READ Response Middle (14)" 14 ours
have_op "ours: RC RDMA READ Response Last (15)" 15 ours
have_op "ours: RC Acknowledge (17)" 17 ours
have_op "rxe: RC RDMA READ Request (12), answered by us" 12 theirs
t_expect "every frame goes to UDP port 4791" "4791" "$(cut -d, -f4 "$work/fields" | sort -u | tr '\n' ' ' | sed 's/ $//')"

# IPv4 header checksum verified by tshark (1 = good); UDP checksum over
# IPv4 is 0 (not used, allowed) or good; over IPv6 it must be good
t_expect "ours: IPv4 header checksum good on every frame" "1" \
	"$(ours | awk -F, '$2 != "" { print $8 }' | sort -u | tr '\n' ' ' | sed 's/ $//')"
bad6=$(ours | awk -F, '$3 != "" && $9 != 1' | head -n 3)
n6=$(ours | awk -F, '$3 != ""' | wc -l)
if [ "$n6" -gt 0 ] && [ -z "$bad6" ]; then
	t_ok "ours: IPv6 UDP checksum good on all $n6 frames"
else
	t_fail "ours: IPv6 UDP checksum good on all $n6 frames" "$bad6"
fi
bad4=$(ours | awk -F, '$2 != "" && $10 != "0x0000" && $9 != 1' | head -n 3)
t_expect "ours: IPv4 UDP checksum zero or good" "" "$bad4"

# the first round's QPNs and PSNs, from ibv_rc_pingpong's own output:
# our SENDs carry the rxe QPN and start at our initial PSN, our ACKs too
lq=$(pp_addr "$pp1" local QPN) lp=$(pp_addr "$pp1" local PSN) rq=$(pp_addr "$pp1" remote QPN)
diag "round 1: $IB_A QPN 0x$lq PSN 0x$lp, $RXE QPN 0x$rq"
first=$(ours | awk -F, -v q="0x$rq" '$6 == q && $5 != 17 { print $7; exit }')
t_expect "ours: first SEND to rxe QPN 0x$rq carries our initial PSN" "$((16#${lp:-0}))" "${first:-none}"
nack=$(ours | awk -F, -v q="0x$rq" '$6 == q && $5 == 17' | wc -l)
if [ "$nack" -gt 0 ]; then t_ok "ours: ACKs to rxe QPN 0x$rq ($nack)"; else t_fail "ours: ACKs to rxe QPN 0x$rq"; fi
dqps=$(theirs | awk -F, -v q="0x$lq" '$6 == q' | wc -l)
if [ "$dqps" -gt 0 ]; then t_ok "rxe addresses our QPN 0x$lq ($dqps frames)"; else t_fail "rxe addresses our QPN 0x$lq"; fi

# PSN sequence of our requests and READ responses, per destination QP:
# each packet takes the next PSN (a READ request as many as its response
# packets, MTU 1024 here), never skips one; going back is a retransmission
# (go-back-N after a timeout: ACK latency under TCG can exceed the 67 ms
# the tools set) and there are no more of them than timeouts we counted
seq=$(ours | awk -F, '
	$5 == 17 { next }                       # ACKs repeat the last PSN
	{ q = $6; p = $7; n = 1
	  if ($5 == 12) n = int(($11 + 1023) / 1024)
	  if (n < 1) n = 1
	  if (!(q in top) || p == (top[q] + 1) % 16777216) { top[q] = (p + n - 1) % 16777216; next }
	  if (((top[q] - p + 16777216) % 16777216) < 8388608) {
		if (!((q, p) in back)) rew++
		back[q, p] = 1; next }
	  bad++; if (bad <= 3) print "QP " q ": PSN " top[q] " then " p " (opcode " $5 ")" }
	END { print "checked", NR, "rewinds", rew + 0, "bad", bad + 0 }')
# (a READ response is resent when rxe resends its READ request)
s1r=$(( $(ib_counter "$IB_A" 1 local_ack_timeouts) + $(ib_counter "$RXE" 1 completer_retry_err) ))
diag "PSNs: $(tail -n 1 <<<"$seq"); timeouts so far ($IB_A local_ack_timeouts + $RXE completer_retry_err): $s1r"
if grep -q "bad 0$" <<<"$seq"; then t_ok "ours: PSNs consecutive per QP, no gap"; else t_fail "ours: PSNs consecutive per QP, no gap" "$seq"; fi
rew=$(sed -n 's/.*rewinds \([0-9]*\).*/\1/p' <<<"$seq" | tail -n 1)
if [ "${rew:-0}" -le "$s1r" ]; then t_ok "ours: PSN rewinds ($rew) only after timeouts ($s1r)"; else t_fail "ours: PSN rewinds ($rew) only after timeouts ($s1r)"; fi
acks=$(ours | awk -F, '$5 == 17 { q = $6; p = $7; if (q in last && ((p - last[q] + 16777216) % 16777216) > 8388608) bad++; last[q] = p }
	END { print bad + 0 }')
t_expect "ours: ACK PSNs never go backwards" "0" "$acks"

# the ICRC of every frame, recomputed (tshark shows it but cannot verify it)
python3 "$here/icrc_check.py" "$work/roce.pcap" >"$work/icrc" 2>&1
no=$(awk -v a="$IP_A" -v b="$IP6_A" '($3 == a || $3 == b) && $2 == "ok"' "$work/icrc" | wc -l)
nb=$(grep -c " bad " "$work/icrc")
nt=$(awk -v a="$IP_B" -v b="$IP6_B" '($3 == a || $3 == b) && $2 == "ok"' "$work/icrc" | wc -l)
if [ "$no" -gt 0 ] && [ "$nt" -gt 0 ] && [ "$nb" = 0 ]; then
	t_ok "ICRC recomputed: $no of ours and $nt of rxe's frames match, none bad"
else
	t_fail "ICRC recomputed" "ours ok $no, rxe ok $nt, bad $nb" "$(grep bad "$work/icrc" | head -n 5)"
fi
# and the check sees a flipped payload bit
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[24 + 16 + 100] ^= 4; open(sys.argv[2], "wb").write(b)' \
	"$work/roce.pcap" "$work/bad.pcap"
t_expect "ICRC check rejects a frame with one flipped bit" "1 bad" \
	"$(python3 "$here/icrc_check.py" "$work/bad.pcap" | awk '$2 == "bad" { print $1, $2 }')"
snap s1
diag "captured rounds: $IB_A tx $((s1_gtx - s0_gtx)) rx $((s1_grx - s0_grx)); $RXE sent $((s1_rtx - s0_rtx)) rcvd $((s1_rrx - s0_rrx))"
t_expect "rxe accepted (ICRC checked) every frame we sent" "$((s1_gtx - s0_gtx))" "$((s1_rrx - s0_rrx))"

# ---- bigger rounds in both roles
for s in 256 1024 4000 65536; do
	n=20
	[ "$s" = 65536 ] && n=5
	gaudi_srv "ibv_rc_pingpong $s B x $n" 180 ibv_rc_pingpong -c -s "$s" -n "$n"
	rxe_srv "ibv_rc_pingpong $s B x $n" 180 ibv_rc_pingpong -c -s "$s" -n "$n"
done
FAMILY=6 gaudi_srv "ibv_rc_pingpong IPv6 65536 B x 5" 180 ibv_rc_pingpong -c -s 65536 -n 5
FAMILY=6 rxe_srv "ibv_rc_pingpong IPv6 65536 B x 5" 180 ibv_rc_pingpong -c -s 65536 -n 5
FAMILY=6 rxe_srv "ibv_rc_pingpong IPv6 with events 4000 B x 20" 180 ibv_rc_pingpong -e -c -s 4000 -n 20
# perftest: each end takes the peer's outstanding-reads count for its
# max_rd_atomic; rxe offers 128 and we allow 16 (max_qp_init_rd_atom), so
# both are told 16 (-o)
export GIDOPT=-x
# the duplicate requests we see must come from rxe's retransmissions
rdiag() { diag "$(tail -n 2 <<<"$PAIR_OUT_C" | head -n 1)" \
	"$IB_A duplicate_requests $(ib_counter "$IB_A" 1 duplicate_requests) retransmits $(ib_counter "$IB_A" 1 retransmits), $RXE completer_retry_err $(ib_counter "$RXE" 1 completer_retry_err) duplicate_request $(ib_counter "$RXE" 1 duplicate_request)"; }
for t in ib_write_bw "ib_read_bw -o 16" ib_send_bw; do
	gaudi_srv "$t 64 KiB x 50" 300 $t -F -s 65536 -n 50
	rdiag
	rxe_srv "$t 64 KiB x 50" 300 $t -F -s 65536 -n 50
	rdiag
done
FAMILY=6 gaudi_srv "ib_write_bw IPv6 64 KiB x 50" 300 ib_write_bw -F -s 65536 -n 50
rdiag
FAMILY=6 rxe_srv "ib_read_bw IPv6 64 KiB x 50" 300 ib_read_bw -F -o 16 -s 65536 -n 50
rdiag
unset GIDOPT

# ---- counters of the whole run
snap s2
diag "$IB_A: $(ib_stats "$IB_A" 1)" "$RXE: $(ib_stats "$RXE" 1)"
gtx=$((s2_gtx - s0_gtx)) grx=$((s2_grx - s0_grx)) rtx=$((s2_rtx - s0_rtx)) rrx=$((s2_rrx - s0_rrx))
nob=$((s2_bnob - s0_bnob))
diag "whole run: $IB_A tx $gtx rx $grx; $RXE sent $rtx rcvd $rrx; $IF_B RX ring overflows (mac_rx_no_buffer) $nob"
t_expect "$IF_B RX rings never ran out of buffers" 0 "$nob"
# rxe counts rcvd_pkts only after its header and ICRC checks pass, and
# logs "bad ICRC" when one fails
t_expect "rxe accepted every frame we sent (rcvd_pkts = our tx_packets)" "$gtx" "$rrx"
t_expect "rxe logged no bad ICRC" "" "$(dmesg | grep -i 'bad ICRC' | head -n 3)"
t_expect "we accepted every frame rxe sent (rx_packets = rxe sent_pkts)" "$rtx" "$grx"
# no frame was rejected or lost: no ICRC error, no sequence NAK
# either way, no retry exhausted
for c in rx_icrc_errors seq_nak_received; do
	t_expect "$IB_A $c = 0" 0 "$(ib_counter "$IB_A" 1 $c)"
done
for c in rcvd_seq_err retry_exceeded_err send_err; do
	t_expect "$RXE $c = 0" 0 "$(ib_counter "$RXE" 1 $c)"
done
# timeouts are timing (both ends use the 67 ms the tools set, and TCG can
# be slower): they are reported, and duplicates or out-of-sequence
# packets may only follow them
to=$(ib_counter "$IB_A" 1 local_ack_timeouts) rr=$(ib_counter "$RXE" 1 completer_retry_err)
dup=$(ib_counter "$IB_A" 1 duplicate_requests) oos=$(ib_counter "$IB_A" 1 out_of_sequence)
rdup=$(ib_counter "$RXE" 1 duplicate_request) roos=$(ib_counter "$RXE" 1 out_of_seq_request)
diag "timeouts: $IB_A $to, $RXE $rr; duplicates seen: by $IB_A $dup, by $RXE $rdup; out of sequence: $IB_A $oos, $RXE $roos"
if { [ "$dup" = 0 ] && [ "$oos" = 0 ] && [ "$rdup" = 0 ] && [ "$roos" = 0 ]; } ||
   [ "$to" -gt 0 ] || [ "$rr" -gt 0 ]; then
	t_ok "duplicates and out-of-sequence packets only after timeouts"
else
	t_fail "duplicates and out-of-sequence packets only after timeouts"
fi

# ethtool -S: on the RoCE port the engine's frames are counted as RoCE and
# the netdev's RX rings see only the TCP exchanges of the tools; on the
# rxe side (enable_roce off) it is the other way round
ertx=$((s2_ertx - s0_ertx)) errx=$((s2_errx - s0_errx)) enrx=$((s2_enrx - s0_enrx))
brrx=$((s2_brrx - s0_brrx)) bnrx=$((s2_bnrx - s0_bnrx))
diag "ethtool $IF_A: roce_tx_frames +$ertx roce_rx_frames +$errx rx*_packets +$enrx; $IF_B: roce_rx_frames +$brrx rx*_packets +$bnrx"
if [ "$ertx" -ge "$gtx" ] && [ "$gtx" -gt 0 ]; then t_ok "$IF_A roce_tx_frames +$ertx >= tx_packets +$gtx"; else t_fail "$IF_A roce_tx_frames +$ertx >= tx_packets +$gtx"; fi
if [ "$errx" -ge "$grx" ] && [ "$grx" -gt 0 ]; then t_ok "$IF_A roce_rx_frames +$errx >= rx_packets +$grx"; else t_fail "$IF_A roce_rx_frames +$errx >= rx_packets +$grx"; fi
if [ "$enrx" -lt "$grx" ]; then t_ok "$IF_A netdev RX rings did not see the RoCE frames (+$enrx < $grx)"; else t_fail "$IF_A netdev RX rings did not see the RoCE frames (+$enrx < $grx)"; fi
t_expect "$IF_B (enable_roce off) roce_rx_frames unchanged" 0 "$brrx"
if [ "$bnrx" -ge "$rrx" ]; then t_ok "$IF_B netdev RX rings carried the RoCE frames (+$bnrx >= $rrx)"; else t_fail "$IF_B netdev RX rings carried the RoCE frames (+$bnrx >= $rrx)"; fi
tap_done
