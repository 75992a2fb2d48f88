#!/usr/bin/env bash
# read_stall.sh - does one huge RDMA READ hold the engine? (issue 13,
# finding 2; make bench).  ib_write_lat between two gaudi devices over a
# cable, alone and then while ib_read_bw moves 256 MiB READs at MTU 256
# (1 Mi responses each) on another QP of the same two devices.  Prints the
# median latency of each, the spread, and their ratio; timing never
# decides pass/fail (a perftest sample that failed its clock calibration,
# 0 or inf, is discarded and counted).
# Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-48}
DEV_B=${DEV_B:-49}
. "$here/lib.sh"
RUNS=${RUNS:-5}
export RUNS

trap rdma_env_cleanup EXIT
tap_env_start rdma_env_setup
t_ok "environment: $IB_A ($NS_A) cabled to $IB_B ($NS_B)"

lat_typ() { awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+/ { v = $5 } END { print v }' <<<"$1"; }
is_meas() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]] && [[ ! $1 =~ ^0+(\.0+)?$ ]]; }
# median and spread (min-max) of the numbers on stdin
stats() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "none"; exit }
	m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "%.2f %.2f %.2f %d\n", m, v[1], v[NR], NR }'; }

# lat_once: one ib_write_lat 8 B run; prints its typical latency (us)
lat_once() {
	pair "ib_write_lat 8 B ($1)" 120 ib_write_lat -F -s 8 -n 1000 -I 8 -p 18515 \
		-d "$IB_A" -x "$GID_A" -- ib_write_lat -F -s 8 -n 1000 -I 8 -p 18515 \
		-d "$IB_B" -x "$GID_B" "$IP_A" >/dev/null
	local v
	v=$(lat_typ "$PAIR_OUT_C")
	is_meas "$v" || printf '%s\n' "server:" "$PAIR_OUT_S" "client:" "$PAIR_OUT_C" | tail -n 25 | sed 's/^/# /' >&2
	echo "$v"
}

alone=() busy=() bad=0
for ((i = 0; i < RUNS; i++)); do
	v=$(lat_once alone)
	if is_meas "$v"; then alone+=("$v"); else bad=$((bad + 1)); fi
done

# the READ load: ib_read_bw 256 MiB at MTU 256, as many as it takes
rd_out=$(mktemp)
in_ns "$NS_A" timeout 600 ib_read_bw -F -s 268435456 -n 1000 -m 256 -p 18600 \
	-d "$IB_A" -x "$GID_A" >/dev/null 2>&1 &
rd_srv=$!
wait_listen "$NS_A" 18600 || sleep 1
in_ns "$NS_B" timeout 600 ib_read_bw -F -s 268435456 -n 1000 -m 256 -p 18600 \
	-d "$IB_B" -x "$GID_B" "$IP_A" >"$rd_out" 2>&1 &
rd_cli=$!
sleep 3	# connected, READs flowing
resp0=$(ib_counter "$IB_A" 1 tx_packets)
for ((i = 0; i < RUNS; i++)); do
	v=$(lat_once "beside 256 MiB READs")
	if is_meas "$v"; then busy+=("$v"); else bad=$((bad + 1)); fi
done
resp1=$(ib_counter "$IB_A" 1 tx_packets)
if kill -0 "$rd_cli" 2>/dev/null; then
	t_ok "the READs were still running when the last latency run ended"
else
	t_fail "the READs were still running when the last latency run ended" "$(cat "$rd_out")"
fi
diag "ib_read_bw client so far:" "$(tail -n 15 "$rd_out")"
diag "$IB_A: $(ib_stats "$IB_A" 1 | tr '\n' ' ')" "$IB_B: $(ib_stats "$IB_B" 1 | tr '\n' ' ')"
kill "$rd_cli" "$rd_srv" 2>/dev/null
wait "$rd_cli" "$rd_srv" 2>/dev/null
rm -f "$rd_out"

read -r am amin amax an <<<"$(printf '%s\n' "${alone[@]}" | stats)"
read -r bm bmin bmax bn <<<"$(printf '%s\n' "${busy[@]}" | stats)"
diag "ib_write_lat 8 B alone: median $am us (min $amin, max $amax, $an runs)"
diag "ib_write_lat 8 B beside 256 MiB READs at MTU 256: median $bm us (min $bmin, max $bmax, $bn runs)"
diag "READ responses sent meanwhile by $IB_A: $((resp1 - resp0)); samples discarded (clock calibration): $bad"
if is_meas "$am" && is_meas "$bm"; then
	diag "latency ratio, beside the READs / alone: $(awk -v a="$am" -v b="$bm" 'BEGIN { printf "%.2f", b / a }') (goal: under 2)"
	t_ok "latency measured alone and beside the READs"
else
	t_fail "latency measured alone and beside the READs" "alone: ${alone[*]}" "busy: ${busy[*]}"
fi
tap_done
