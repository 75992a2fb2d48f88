#!/usr/bin/env bash
# gcoll_bridge.sh - collectives at 8 ranks through real switches (issue 32):
# 8 devices, 2 ports each, port p of every device uplinked through a veth
# to the Linux bridge br<p>: two rails (bridge_lib.sh has the topology and
# the addressing).
#
# Every collective runs HBM to HBM on 8 ranks over one rail and is checked
# (-c 1); then the all-reduce on two rails (GCOLL_NRAILS=2), and both ports
# of every device must have carried data.  With one rail, the second
# bridge must have carried none: the route, not luck, picks the port.
# Output: TAP.
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/gcoll_lib.sh"
FIRST_DEV=${FIRST_DEV:-88}
N=${BRIDGE_RANKS:-8}
PORT=29700
# HBM per device (MiB): the 4 MiB all-reduce and its neighbours
HBM_MB=48
. "$here/bridge_lib.sh"

trap bridge_cleanup EXIT
tap_env_start bridge_setup
t_ok "$N devices, 2 ports each, port p uplinked to a veth on bridge br<p>: two rails (10.97.0.0/24, 10.97.1.0/24)"
need_test_bin gcoll-perf "$PERF"
mark=$(dmesg | wc -l)

# port_bytes P: "r=bytes ..." of port P (1 or 2) of every device
declare -A base=()
snap_ports() {
	local r p
	for ((r = 0; r < N; r++)); do
		for ((p = 1; p <= 2; p++)); do
			base[$r.$p]=$(ib_counter "gaudi_$(dev $r)" "$p" tx_bytes)
		done
	done
}
# moved P: the devices whose port P sent data since snap_ports, and idle
moved() {
	local r
	MOVED=0 IDLE=
	for ((r = 0; r < N; r++)); do
		if [ "$(ib_counter "gaudi_$(dev $r)" "$1" tx_bytes)" -gt "${base[$r.$1]}" ]; then
			MOVED=$((MOVED + 1))
		else
			IDLE+=" gaudi_$(dev $r)/$1"
		fi
	done
}

# one rail: every collective, checked
snap_ports
if perfn "$N" out -C allreduce -b 8 -e 4M -f 8 -n 2 -w 1 -c 1; then
	perf_ok "$N ranks through br0: all-reduce fp32 sum HBM to HBM, 8 B to 4 MiB" "$out"
	native_ok "$N ranks" "$out"
else
	t_fail "$N ranks through br0: all-reduce fp32 sum HBM to HBM, 8 B to 4 MiB" "$out" "$PERF_ERR"
fi
for spec in "allgather int32" "reducescatter float" "broadcast double" "reduce int64" \
	    "alltoall uint8"; do
	set -- $spec
	if perfn "$N" out -C "$1" -d "$2" -b 8 -e 256K -f 32 -n 1 -w 1 -c 1; then
		perf_ok "$N ranks through br0: $1 $2 HBM to HBM, 8 B to 256 KiB" "$out"
	else
		t_fail "$N ranks through br0: $1 $2 HBM to HBM, 8 B to 256 KiB" "$out" "$PERF_ERR"
	fi
done
moved 1
[ "$MOVED" = "$N" ] && t_ok "one rail: port 1 of every device sent data" ||
	t_fail "one rail: port 1 of every device sent data" "idle:$IDLE"
moved 2
[ "$MOVED" = 0 ] && t_ok "one rail: no port 2 sent RoCE data (br1 idle)" ||
	t_fail "one rail: no port 2 sent RoCE data" "$MOVED ports sent"

# two rails: rendezvous writes striped over both bridges
snap_ports
if GCOLL_NRAILS=2 perfn "$N" out -C allreduce -b 1M -e 4M -f 4 -n 2 -w 1 -c 1; then
	perf_ok "$N ranks, 2 rails (br0 and br1): all-reduce fp32 sum HBM to HBM, 1 to 4 MiB" "$out"
	grep -q 'rails 2' <<<"$out" && t_ok "2 rails: every rank opened both" ||
		t_fail "2 rails: every rank opened both" "$(grep '^# gcoll-perf' <<<"$out")"
	moved 1
	m1=$MOVED i1=$IDLE
	moved 2
	if [ "$m1" = "$N" ] && [ "$MOVED" = "$N" ]; then
		t_ok "2 rails: both ports of all $N devices carried data"
	else
		t_fail "2 rails: both ports of all $N devices carried data" "idle:$i1$IDLE"
	fi
else
	t_fail "$N ranks, 2 rails: all-reduce fp32 sum HBM to HBM, 1 to 4 MiB" "$out" "$PERF_ERR"
fi
# failure at scale: an uplink taken down in the middle of a 2-rail job.
# libgcoll stripes each write over both rails and does not move a rail's
# share to the other (neither does NCCL, which aborts; HCCL retries on a
# borrowed NIC), so every rank must return an error of its own within the
# communicator's timeout (GCOLL_TIMEOUT_MS, 30 s here), not hang
tmp=$(mktemp -d)
PORT=$((PORT + 1))
pids=()
for ((r = 0; r < N; r++)); do
	ip netns exec "$(ns $r)" env RANK=$r WORLD_SIZE=$N MASTER_ADDR="$(addr 0)" \
		MASTER_PORT=$PORT GCOLL_NRAILS=2 GCOLL_TIMEOUT_MS=30000 timeout 300 "$PERF" \
		-H "$(dev $r)" -C allreduce -b 1M -e 1M -n 100000 -w 0 -c 0 \
		>"$tmp/out.$r" 2>&1 &
	pids+=($!)
done
for ((i = 0; i < 1800; i++)); do
	grep -q '^# gcoll-perf' "$tmp/out.0" && break
	sleep 0.1
done
sleep 2
victim=$((N / 2))
ip -n "$(ns $victim)" link set up1 down
t0=$(date +%s)
for ((i = 0; i < 1200; i++)); do
	alive=0
	for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
	[ "$alive" = 0 ] && break
	sleep 0.1
done
secs=$(($(date +%s) - t0))
bad=
for ((r = 0; r < N; r++)); do
	kill -KILL "${pids[$r]}" 2>/dev/null
	wait "${pids[$r]}"
	rc=$?
	{ [ "$rc" = 1 ] && [ -n "$(perf_error "$tmp/out.$r")" ]; } || bad+=" rank $r: rc $rc, $(tail -n 2 "$tmp/out.$r" | tr '\n' ' ');"
done
if [ -z "$bad" ] && [ "$secs" -le 120 ]; then
	t_ok "rank $victim's rail-1 uplink down mid 2-rail all-reduce: all $N ranks returned an error, with its reason, within $secs s (rank 0: $(perf_error "$tmp/out.0"))"
else
	t_fail "rank $victim's rail-1 uplink down mid 2-rail all-reduce: every rank returns an error, with its reason, within 120 s" \
		"after $secs s:$bad"
fi
ip -n "$(ns $victim)" link set up1 up
rm -rf "$tmp"
nports=$(ip -n "$SW_NS" -j link show master br1 | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
t_expect "br1 has all $N ports" "$N" "$nports"

dmesg_check "$mark"
tap_done
