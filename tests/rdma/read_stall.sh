#!/usr/bin/env bash
# read_stall.sh - does one huge RDMA READ hold the engine? (issue 13,
# finding 2; make bench).  The latency of 8-byte RDMA WRITEs between two
# gaudi devices over a cable, alone and while 256 MiB READs at MTU 256
# (1 Mi responses each) run on another QP of the same two devices.
# Latency is measured by hardening_test's "lat" mode, ib_write_lat's
# method (half a WRITE round trip) timed with clock_gettime(): perftest's
# own cycle-counter calibration fails on a loaded TCG guest ("Correlation
# coefficient ... < 0.9", then inf).  perftest's ib_write_lat alone is
# printed beside it as a cross-check.  Prints medians, spread and the
# ratio; timing never decides pass/fail.
# Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-48}
DEV_B=${DEV_B:-49}
. "$here/lib.sh"
RUNS=${RUNS:-5}
ITERS=${ITERS:-2000}
bin=${HARDENING_TEST:-/build/tests-rdma/hardening_test}

trap 'kill $load 2>/dev/null; rdma_env_cleanup' EXIT
tap_env_start rdma_env_setup
t_ok "environment: $IB_A ($NS_A) cabled to $IB_B ($NS_B)"
need_test_bin hardening_test "$bin"

# median, min and max of the numbers on stdin
stats() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "none"; exit }
	m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "%.2f %.2f %.2f %d\n", m, v[1], v[NR], NR }'; }
# lat_run: one run of ITERS round trips; prints its median (us)
lat_run() {
	local out
	out=$("$bin" lat "$IB_A" "$GID_A" "$IB_B" "$GID_B" "$ITERS" 2>&1)
	diag "$1: $out" >&2
	awk '/^lat_us/ { print $3 }' <<<"$out"
}

# pf_run: one perftest ib_write_lat (in a subshell: its TAP line is not ours)
pf_run() {
	pair "ib_write_lat 8 B" 120 ib_write_lat -F -s 8 -n 1000 -I 8 \
		-d "$IB_A" -x "$GID_A" -- ib_write_lat -F -s 8 -n 1000 -I 8 \
		-d "$IB_B" -x "$GID_B" "$IP_A" >/dev/null
	lat_typ "$PAIR_OUT_C"
}
pf=()
for ((i = 0; i < RUNS; i++)); do
	v=$(pf_run)
	is_meas "$v" && pf+=("$v")
done
alone=() busy=()
for ((i = 0; i < RUNS; i++)); do
	v=$(lat_run alone)
	is_meas "$v" && alone+=("$v")
done

# the load: 256 MiB READs at MTU 256, B from A, until killed
lo=$(mktemp)
"$bin" readload "$IB_A" "$GID_A" "$IB_B" "$GID_B" 900 >"$lo" 2>&1 &
load=$!
tx0=$(ib_counter "$IB_A" 1 tx_packets)
for ((i = 0; i < 240; i++)); do	# registering 2 x 256 MiB takes a while
	[ $(($(ib_counter "$IB_A" 1 tx_packets) - tx0)) -gt 20000 ] && break
	sleep 0.5
done
tx1=$(ib_counter "$IB_A" 1 tx_packets)
for ((i = 0; i < RUNS; i++)); do
	v=$(lat_run "beside the READs")
	is_meas "$v" && busy+=("$v")
done
tx2=$(ib_counter "$IB_A" 1 tx_packets)
if kill -0 "$load" 2>/dev/null; then
	t_ok "the READs ran through every measurement ($((tx2 - tx1)) responses meanwhile)"
else
	t_fail "the READs ran through every measurement" "$(cat "$lo")"
fi
kill "$load" 2>/dev/null
wait "$load" 2>/dev/null
diag "$(cat "$lo")"
rm -f "$lo"

read -r pm pmin pmax pn <<<"$(printf '%s\n' "${pf[@]}" | stats)"
read -r am amin amax an <<<"$(printf '%s\n' "${alone[@]}" | stats)"
read -r bm bmin bmax bn <<<"$(printf '%s\n' "${busy[@]}" | stats)"
diag "perftest ib_write_lat 8 B alone (t_typical): median $pm us (min $pmin, max $pmax, $pn runs)"
diag "8 B WRITE latency alone: median $am us (min $amin, max $amax, $an runs of $ITERS)"
diag "8 B WRITE latency beside 256 MiB READs at MTU 256: median $bm us (min $bmin, max $bmax, $bn runs of $ITERS)"
if is_meas "$am" && is_meas "$bm"; then
	diag "latency ratio, beside the READs / alone: $(awk -v a="$am" -v b="$bm" 'BEGIN { printf "%.2f", b / a }') (goal: under 2)"
	t_ok "latency measured alone and beside the READs"
else
	t_fail "latency measured alone and beside the READs" "alone: ${alone[*]}" "busy: ${busy[*]}"
fi
tap_done
