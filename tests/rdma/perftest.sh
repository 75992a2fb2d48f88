#!/usr/bin/env bash
# perftest.sh - perftest between two gaudi devices in two namespaces over a
# cable (ib_write_bw, ib_read_bw, ib_send_bw at 64 KiB, ib_write_lat and
# ib_send_lat at 8 B, ib_write_bw at 64 B; ib_write_bw 64 KiB again with
# the receive pipeline off, with zero-copy transmit off, and with the ICRC
# insertion offload off, every ICRC computed and checked in software, and
# with the engines' threads left to the scheduler instead of the last CPU),
# then ib_write_bw and ib_write_lat on rdma_rxe in loopback (its best case
# in one guest) and a memcpy reference, with the ratios.  Timing never
# decides pass/fail.
# Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-32}
DEV_B=${DEV_B:-33}
. "$here/lib.sh"

ICRC_PARAM=/sys/module/gaudi_nic_sim/parameters/roce_icrc_offload
ZC_PARAM=/sys/module/gaudi_nic_sim/parameters/roce_tx_zerocopy
PIPE_PARAM=/sys/module/gaudi_nic_sim/parameters/roce_rx_pipeline
TRAIN_PARAM=/sys/module/gaudi_nic_sim/parameters/roce_tx_train
cleanup() {
	[ -w "$PIPE_PARAM" ] && echo 1 > "$PIPE_PARAM"
	[ -w "$ICRC_PARAM" ] && echo 1 > "$ICRC_PARAM"
	[ -w "$ZC_PARAM" ] && echo 1 > "$ZC_PARAM"
	[ -w "$TRAIN_PARAM" ] && echo 16 > "$TRAIN_PARAM"
	rdma link del rxe_lo 2>/dev/null
	rdma_env_cleanup
}
trap cleanup EXIT
# jumbo frames (path MTU 4096), set before the links come up
RDMA_MTU=${RDMA_MTU:-9000}
tap_env_start rdma_env_setup
t_ok "environment: $IB_A ($NS_A) cabled to $IB_B ($NS_B), MTU $RDMA_MTU"


declare -A R
# messages per 64 KiB bandwidth run, gaudi and rxe alike: 10000 is 625 MiB,
# about 0.6 s at 1 GiB/s; 2000 lasted about 0.1 s, mostly ramp-up
BW_ITERS=${BW_ITERS:-10000}
run_pair() { # NAME DESC ARGS...
	local name=$1 desc=$2
	shift 2
	pair "$desc" 180 "$@" -d "$IB_A" -x "$GID_A" -- "$@" -d "$IB_B" -x "$GID_B" "$IP_A"
	R[$name]=$PAIR_OUT_C
	# some tests print their result on the server side only
	[ -n "$(lat_typ "$PAIR_OUT_C")$(bw_avg "$PAIR_OUT_C")" ] || R[$name]=$PAIR_OUT_S
	diag "$IB_A after $name: $(ib_stats "$IB_A" 1 | tr '\n' ' ')"
	diag "$IB_B after $name: $(ib_stats "$IB_B" 1 | tr '\n' ' ')"
}
# trains_run CMD...: run CMD; TRAINS and TFRAMES are then the roce_tx_trains
# and roce_tx_frames that $IF_B (the client's port) sent meanwhile
trains_run() {
	local t0 f0
	t0=$(ethtool_stat "$NS_B" "$IF_B" roce_tx_trains)
	f0=$(ethtool_stat "$NS_B" "$IF_B" roce_tx_frames)
	"$@"
	TRAINS=$(($(ethtool_stat "$NS_B" "$IF_B" roce_tx_trains) - t0))
	TFRAMES=$(($(ethtool_stat "$NS_B" "$IF_B" roce_tx_frames) - f0))
}
trains_run run_pair write_bw "ib_write_bw 64 KiB" ib_write_bw -F -s 65536 -n "$BW_ITERS" -m 4096
# 16 frames of 4 KiB per message: one train each (gnsim_tx_train_slot())
if [ "$TRAINS" -gt 0 ] && [ "$TFRAMES" -ge $((TRAINS * 8)) ]; then
	t_ok "ib_write_bw 64 KiB goes to the MAC in trains ($TFRAMES frames in $TRAINS trains)"
else
	t_fail "ib_write_bw 64 KiB goes to the MAC in trains ($TFRAMES frames in $TRAINS trains)"
fi
run_pair read_bw "ib_read_bw 64 KiB" ib_read_bw -F -s 65536 -n "$BW_ITERS" -m 4096
run_pair send_bw "ib_send_bw 64 KiB" ib_send_bw -F -s 65536 -n "$BW_ITERS" -m 4096
# perftest prints "inf" (or a bandwidth of 0.00) when its clock calibration
# fails, which happens now and then under TCG: such a run is repeated, and
# says so.  is_meas: a number above 0
# measured PARSE WHAT CMD...: run CMD, which leaves perftest's output in
# OUT, until PARSE (bw_avg, lat_typ) finds a measurement in it, at most 3
# times; MEAS is then the figure (false if none was found)
measured() {
	local parse=$1 what=$2 try
	shift 2
	for try in 1 2 3; do
		"$@"
		MEAS=$("$parse" "$OUT")
		is_meas "$MEAS" && return 0
		diag "$what printed '$MEAS' (try $try of 3)"
	done
	return 1
}
# pair_out NAME DESC ARGS...: run_pair, OUT its output
pair_out() { run_pair "$@"; OUT=${R[$1]}; }
measured lat_typ "ib_write_lat, as its latency," \
	pair_out write_lat "ib_write_lat 8 B" ib_write_lat -F -s 8 -n 500 -I 8
# small frames: processed by the receiving engine in the cable's call chain
run_pair send_lat "ib_send_lat 8 B" ib_send_lat -F -s 8 -n 500 -I 8
run_pair write_bw_small "ib_write_bw 64 B" ib_write_bw -F -s 64 -n 2000
# run_pair_off PARAM NAME DESC ARGS...: run_pair with the gaudi_nic module
# parameter PARAM set to 0 (what the feature behind it is worth), then
# back to its value
run_pair_off() {
	local p=/sys/module/gaudi_nic_sim/parameters/$1 old
	shift
	old=$(cat "$p")
	echo 0 > "$p"
	run_pair "$@"
	echo "$old" > "$p"
}
# the receive pipeline off: large frames received in the sender's context
# (on the sender's CPU) when the engine is idle
run_pair_off roce_rx_pipeline write_bw_nopipe "ib_write_bw 64 KiB, receive pipeline off" \
	ib_write_bw -F -s 65536 -n "$BW_ITERS" -m 4096
# zero-copy transmit off: the payload copied into each frame
run_pair_off roce_tx_zerocopy write_bw_copy "ib_write_bw 64 KiB, zero-copy transmit off" \
	ib_write_bw -F -s 65536 -n "$BW_ITERS" -m 4096
# trains off: every frame to the MAC and the receiving engine on its own
trains_run run_pair_off roce_tx_train write_bw_notrain "ib_write_bw 64 KiB, trains off" \
	ib_write_bw -F -s 65536 -n "$BW_ITERS" -m 4096
t_expect "roce_tx_train=0: no trains ($TFRAMES frames sent)" 0 "$TRAINS"
# the ICRC offload off: every ICRC computed and checked in software
run_pair_off roce_icrc_offload write_bw_swicrc "ib_write_bw 64 KiB, ICRC in software" \
	ib_write_bw -F -s 65536 -n "$BW_ITERS" -m 4096
# the engines' threads left to the scheduler instead of the last online
# CPU (roce_engine_cpu=-2, gnsim_roce_place() in sim/roce.c)
run_unplaced() {
	local pid cpus saved=()
	for pid in $(pgrep -x "gaudi_roce/$DEV_A") $(pgrep -x "gaudi_roce/$DEV_B"); do
		cpus=$(taskset -pc "$pid" | awk '{ print $NF }')
		saved+=("$pid:$cpus")
		taskset -pc "0-$(($(nproc) - 1))" "$pid" >/dev/null
	done
	run_pair "$@"
	for pid in "${saved[@]}"; do taskset -pc "${pid#*:}" "${pid%%:*}" >/dev/null; done
}
run_unplaced write_bw_unplaced "ib_write_bw 64 KiB, engine threads left to the scheduler" \
	ib_write_bw -F -s 65536 -n "$BW_ITERS" -m 4096
gw=$(bw_avg "${R[write_bw]}") gr=$(bw_avg "${R[read_bw]}") gs=$(bw_avg "${R[send_bw]}")
gl=$(lat_typ "${R[write_lat]}") gsl=$(lat_typ "${R[send_lat]}") gws=$(bw_avg "${R[write_bw_small]}")
gwi=$(bw_avg "${R[write_bw_swicrc]}") gwc=$(bw_avg "${R[write_bw_copy]}")
gwp=$(bw_avg "${R[write_bw_nopipe]}") gwt=$(bw_avg "${R[write_bw_notrain]}")
gwu=$(bw_avg "${R[write_bw_unplaced]}")
diag "gaudi: write_bw ${gw:-?} MiB/s, read_bw ${gr:-?} MiB/s, send_bw ${gs:-?} MiB/s, write_lat ${gl:-?} us"
diag "gaudi: send_lat ${gsl:-?} us, write_bw at 64 B ${gws:-?} MiB/s"
diag "gaudi: write_bw received in the sender's context (roce_rx_pipeline=0): ${gwp:-?} MiB/s"
diag "gaudi: write_bw with the payload copied into each frame (roce_tx_zerocopy=0): ${gwc:-?} MiB/s"
diag "gaudi: write_bw with every frame sent on its own, no trains (roce_tx_train=0): ${gwt:-?} MiB/s"
diag "gaudi: write_bw with the engine threads left to the scheduler (roce_engine_cpu=-2): ${gwu:-?} MiB/s"
diag "gaudi: write_bw with every ICRC computed and checked in software (roce_icrc_offload=0): ${gwi:-?} MiB/s"
for n in write_bw read_bw send_bw write_lat send_lat write_bw_small write_bw_nopipe write_bw_notrain write_bw_copy write_bw_swicrc write_bw_unplaced; do
	# a result line that did not parse: show what perftest printed
	case $n in *lat) v=$(lat_typ "${R[$n]}") ;; *) v=$(bw_avg "${R[$n]}") ;; esac
	[ -n "$v" ] || diag "$n printed:" "$(tail -n 6 <<<"${R[$n]}")"
done

# rdma_rxe in loopback on lo (initial namespace), the reference
if modprobe -q rdma_rxe && rdma link add rxe_lo type rxe netdev lo 2>/dev/null; then
	gid=$(gid_index rxe_lo 1 127.0.0.1)
	rxe_run() { # ARGS...
		timeout 180 "$@" -d rxe_lo -x "$gid" >/tmp/rxe-s.log 2>&1 &
		sleep 1
		timeout 180 "$@" -d rxe_lo -x "$gid" 127.0.0.1 2>&1
		wait
	}
	rxe_out() { OUT=$(rxe_run "$@"); }
	measured bw_avg "rxe ib_write_bw, as its bandwidth," \
		rxe_out ib_write_bw -F -s 65536 -n "$BW_ITERS" -m 4096
	rw=$MEAS out=$OUT
	measured lat_typ "rxe ib_write_lat, as its latency," \
		rxe_out ib_write_lat -F -s 8 -n 500 -I 8
	rl=$MEAS out2=$OUT
	# not our code: a failing reference is reported, not counted
	if is_meas "$rw" && is_meas "$rl"; then
		t_ok "rxe loopback reference measured"
	else
		t_skip "rxe loopback reference measured" "rxe run failed"
	fi
	diag "rxe ib_write_bw:" "$(tail -n 4 <<<"$out")" "rxe ib_write_lat:" "$(tail -n 4 <<<"$out2")"
	rdma link del rxe_lo
else
	t_skip "rxe loopback reference" "rdma_rxe unavailable"
fi
# the memcpy reference: the C library's memcpy() on one CPU (memcpy_bw.c,
# its release build: no sanitizer in the loop), 64 MiB buffers (memory
# bandwidth, the ratio's reference) and 64 KiB (cache, shown)
mcbin=${MEMCPY_BW:-/build/tests-rdma-rel/memcpy_bw}
mc='' mcc='' mco='' mcco=''
if [ -x "$mcbin" ] && mco=$("$mcbin" 65536 1 2>&1) && mcco=$("$mcbin" 64 1 2>&1); then
	mc=$(awk '{ print $4 }' <<<"$mco")	# memcpy SIZE KiB: RATE MiB/s (...)
	mcc=$(awk '{ print $4 }' <<<"$mcco")
	t_ok "memcpy reference measured: $mco; $mcco"
else
	t_fail "memcpy reference measured" "${mcco:-${mco:-$mcbin is missing: run 'make user' first}}"
fi
diag "rxe loopback: write_bw ${rw:-?} MiB/s, write_lat ${rl:-?} us; memcpy ${mc:-?} MiB/s (64 MiB), ${mcc:-?} MiB/s (64 KiB)"
if is_meas "${gw:-}" && is_meas "${rw:-}" && is_meas "${gl:-}" && is_meas "${rl:-}"; then
	mratio=
	is_meas "$mc" && mratio=$(python3 -c "print(', gaudi write_bw/memcpy = %.4f' % ($gw / $mc))")
	diag "$(python3 -c "print('ratios: write_bw gaudi/rxe = %.2f x (goal >= 10), write_lat gaudi/rxe = %.2f (goal <= 0.5)' % ($gw / $rw, $gl / $rl))")$mratio"
fi
tap_done
