#!/usr/bin/env bash
# rdmacm_bench.sh - the benchmark of issue 14 (make bench), every figure
# against a peer measured in the same run:
#  * UD: ib_send_bw -c UD (1 KiB, one path MTU) and ib_send_lat -c UD (8 B),
#    gaudi_$DEV_A <- gaudi_$DEV_B across a cable, against rdma_rxe in
#    loopback (rxe on a veth in the initial namespace, path MTU 1024 too);
#  * rdma_cm: the time to connect 64 ucmatose connections (-C 1: the
#    client's wall time, connect + one message + disconnect) on the same
#    two, gaudi across the cable against rxe loopback;
#  * libfabric: fi_pingpong -p "verbs;ofi_rxm" -e rdm latency (usec/xfer
#    at 8 B: half a round trip, as ib_send_lat) and bandwidth (64 KiB)
#    against ib_send_lat 8 B, ib_send_lat 64 KiB (the same ping-pong in raw
#    verbs) and ib_write_bw 64 KiB on the same gaudi pair: what libfabric
#    costs on top of raw verbs.
# Each figure is the median of RUNS runs, with min and max; a perftest
# sample of inf or 0.00 (its clock calibration fails now and then under
# TCG) is dropped and said so.  Timing never decides pass/fail; a tool that
# fails to run does.  Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-58}
DEV_B=${DEV_B:-59}
. "$here/rcm_lib.sh"
RUNS=${RUNS:-3}
RXE=rxe_bench
VETH=rcmb$DEV_A
RXE_IP=203.0.113.1

cleanup() {
	rdma link del "$RXE" 2>/dev/null
	ip link del "$VETH" 2>/dev/null
	rdma_env_cleanup
}
bench_setup() {
	modprobe -q rdma_ucm && modprobe -q ib_cm || { echo "cannot load rdma_ucm"; return 1; }
	rdma_env_setup || return 1
	modprobe -q rdma_rxe || { echo "cannot load rdma_rxe"; return 1; }
	ip link add "$VETH" type veth peer name "${VETH}p" || return 1
	ip addr add "$RXE_IP/24" dev "$VETH"
	ip link set "${VETH}p" up && ip link set "$VETH" up || return 1
	rdma link add "$RXE" type rxe netdev "$VETH" || return 1
	ib_wait_active "$RXE" 1 || return 1
	RXE_GID=$(gid_index "$RXE" 1 "$RXE_IP")
}
trap cleanup EXIT
tap_env_start bench_setup
t_ok "environment: $IB_A ($NS_A) cabled to $IB_B ($NS_B); $RXE on $VETH ($RXE_IP, gid $RXE_GID)"

# median, min and max of the numbers on stdin: "median min max count"
stats() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "none - - 0"; exit }
	m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "%.2f %.2f %.2f %d\n", m, v[1], v[NR], NR }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "?" }'; }
declare -A M	# name -> "median min max count"
# collect NAME PARSE CMD...: RUNS runs of CMD (prints the tool's output),
# PARSE (bw_avg, lat_typ, or a function) extracts the figure
collect() {
	local name=$1 parse=$2 out v vals=() i bad=0 last=
	shift 2
	for ((i = 0; i < RUNS; i++)); do
		out=$("$@" 2>&1)
		v=$("$parse" "$out")
		if is_meas "$v"; then
			vals+=("$v")
		else
			bad=$((bad + 1))
			last=$out
		fi
	done
	M[$name]=$(printf '%s\n' "${vals[@]}" | grep . | stats)
	[ "$bad" = 0 ] || diag "$name: $bad of $RUNS runs gave no figure (inf, 0.00 or a failure), dropped; the last said:" \
		"$(tail -n 6 <<<"$last")"
	if [ ${#vals[@]} -gt 0 ]; then
		t_ok "$name measured (${#vals[@]} of $RUNS runs)"
	else
		t_fail "$name measured" "$(tail -n 20 <<<"$last")"
	fi
}
show() { # NAME UNIT
	local m mn mx n
	read -r m mn mx n <<<"${M[$1]}"
	diag "$1: median $m $2 (min $mn, max $mx, $n runs)"
}
med() { awk '{ print $1 }' <<<"${M[$1]}"; }

# gaudi across the cable: server on A in NS_A, client on B in NS_B
gpair() { # TOOL ARGS...: perftest, both ends, -x GID
	local out_s
	out_s=$(mktemp)
	ns_a timeout 120 "$@" -d "$IB_A" -x "$GID_A" >"$out_s" 2>&1 &
	local sp=$!
	wait_listen "$NS_A" 18515
	ns_b timeout 120 "$@" -d "$IB_B" -x "$GID_B" "$IP_A"
	wait "$sp"
	cat "$out_s"
	rm -f "$out_s"
}
rpair() { # TOOL ARGS...: rxe loopback
	local out_s
	out_s=$(mktemp)
	timeout 120 "$@" -d "$RXE" -x "$RXE_GID" >"$out_s" 2>&1 &
	local sp=$!
	wait_listen init 18515
	timeout 120 "$@" -d "$RXE" -x "$RXE_GID" "$RXE_IP"
	wait "$sp"
	cat "$out_s"
	rm -f "$out_s"
}

# ---- UD (-I 8: perftest's default inline for UD latency, 188 B, is over the
# device's UD inline limit; GAUDI_DEBUG makes the provider say why it
# refuses a QP)
export GAUDI_DEBUG=1
collect "gaudi ib_send_bw -c UD 1 KiB" bw_avg gpair ib_send_bw -c UD -F -s 1024 -n 5000
collect "rxe ib_send_bw -c UD 1 KiB" bw_avg rpair ib_send_bw -c UD -F -s 1024 -n 5000
collect "gaudi ib_send_lat -c UD 8 B" lat_typ gpair ib_send_lat -c UD -F -s 8 -n 500 -I 8
collect "rxe ib_send_lat -c UD 8 B" lat_typ rpair ib_send_lat -c UD -F -s 8 -n 500 -I 8

# ---- 64 ucmatose connections (client wall time)
uc_time() { # NS_S NS_C IP: prints the client's wall time in seconds
	local t0 rc rs sp
	in_ns "$1" timeout 300 ucmatose -b "$3" -c 64 -C 1 >/dev/null 2>&1 &
	sp=$!
	cm_wait_listen 7471
	t0=$(date +%s.%N)
	in_ns "$2" timeout 300 ucmatose -s "$3" -c 64 -C 1 >/dev/null 2>&1
	rc=$?
	wait "$sp"
	rs=$?
	[ "$rc" = 0 ] && [ "$rs" = 0 ] && awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f\n", b - a }'
}
num() { tail -n 1 <<<"$1"; }
collect "gaudi ucmatose 64 connections" num uc_time "$NS_A" "$NS_B" "$IP_A"
collect "rxe ucmatose 64 connections" num uc_time init init "$RXE_IP"

# ---- libfabric on top of raw verbs, same gaudi pair
# fi_pingpong's result line: bytes #sent #ack total time MB/sec usec/xfer
# Mxfers/sec, e.g. "64k 500 =500 62m 1.06s 62.08 1055.72 0.00"
# libfabric's defaults (1024 peers: ofi_rxm's core CQ of 262144 entries,
# libfabric.sh)
fi_pp() { # SIZE
	local out sp
	ns_a env FI_VERBS_IFACE="$IF_A" timeout 120 fi_pingpong -p "verbs;ofi_rxm" -e rdm -S "$1" -I "${FI_ITERS:-500}" -s "$IP_A" >/dev/null 2>&1 &
	sp=$!
	wait_listen "$NS_A" 47592
	ns_b env FI_VERBS_IFACE="$IF_B" timeout 120 fi_pingpong -p "verbs;ofi_rxm" -e rdm -S "$1" -I "${FI_ITERS:-500}" "$IP_A"
	wait "$sp"
}
fi_lat() { awk '/^[0-9]+[kmg]? +[0-9]+ +=/ { v = $7 } END { print v }' <<<"$1"; }
fi_bw() { awk '/^[0-9]+[kmg]? +[0-9]+ +=/ { v = $6 } END { print v }' <<<"$1"; }
collect "fi_pingpong verbs;ofi_rxm 8 B latency" fi_lat fi_pp 8
collect "fi_pingpong verbs;ofi_rxm 64 KiB bandwidth" fi_bw fi_pp 65536
collect "gaudi ib_send_lat 8 B" lat_typ gpair ib_send_lat -F -s 8 -n 500 -I 8
collect "gaudi ib_send_lat 64 KiB" lat_typ gpair ib_send_lat -F -s 65536 -n 200
collect "gaudi ib_write_bw 64 KiB" bw_avg gpair ib_write_bw -F -s 65536 -n 2000

diag "---- results (medians of $RUNS runs; perftest MB = 2^20 bytes, fi_pingpong MB = 10^6 bytes)"
for n in "gaudi ib_send_bw -c UD 1 KiB" "rxe ib_send_bw -c UD 1 KiB"; do show "$n" MiB/s; done
for n in "gaudi ib_send_lat -c UD 8 B" "rxe ib_send_lat -c UD 8 B"; do show "$n" us; done
for n in "gaudi ucmatose 64 connections" "rxe ucmatose 64 connections"; do show "$n" s; done
show "fi_pingpong verbs;ofi_rxm 8 B latency" us
show "fi_pingpong verbs;ofi_rxm 64 KiB bandwidth" MB/s
show "gaudi ib_send_lat 8 B" us
show "gaudi ib_send_lat 64 KiB" us
show "gaudi ib_write_bw 64 KiB" MiB/s
# the raw 64 KiB ping-pong (one way: ib_send_lat's half round trip) as a
# bandwidth in MiB/s, and fi_pingpong's in MiB/s too
pp_raw=$(awk -v l="$(med "gaudi ib_send_lat 64 KiB")" 'BEGIN { if (l + 0 > 0) printf "%.2f", 65536 / l * 1e6 / 1048576; else print "?" }')
fi_bw_mib=$(awk -v b="$(med "fi_pingpong verbs;ofi_rxm 64 KiB bandwidth")" 'BEGIN { if (b + 0 > 0) printf "%.2f", b * 1e6 / 1048576; else print "?" }')
diag "ratios:" \
	"  UD ib_send_bw gaudi/rxe = $(ratio "$(med "gaudi ib_send_bw -c UD 1 KiB")" "$(med "rxe ib_send_bw -c UD 1 KiB")") (higher is better)" \
	"  UD ib_send_lat gaudi/rxe = $(ratio "$(med "gaudi ib_send_lat -c UD 8 B")" "$(med "rxe ib_send_lat -c UD 8 B")") (lower is better)" \
	"  64 ucmatose connections, time gaudi/rxe = $(ratio "$(med "gaudi ucmatose 64 connections")" "$(med "rxe ucmatose 64 connections")") (lower is better)" \
	"  libfabric latency fi_pingpong/ib_send_lat (8 B) = $(ratio "$(med "fi_pingpong verbs;ofi_rxm 8 B latency")" "$(med "gaudi ib_send_lat 8 B")") (1 = no cost)" \
	"  libfabric ping-pong bandwidth fi_pingpong/ib_send_lat as bandwidth (64 KiB) = $(ratio "$fi_bw_mib" "$pp_raw") ($fi_bw_mib vs $pp_raw MiB/s; 1 = no cost)" \
	"  libfabric ping-pong bandwidth fi_pingpong/ib_write_bw (64 KiB, streamed) = $(ratio "$fi_bw_mib" "$(med "gaudi ib_write_bw 64 KiB")")"
tap_done
