#!/usr/bin/env bash
# gcoll_mesh.sh - collectives on the device at 3 and 4 ranks (issue 16):
# one device per rank, each in its own namespace, every pair of devices
# joined by its own cable (a full mesh, as Gaudi-class boxes wire their
# scale-up ports), buffers in HBM registered through FI_MR_DMABUF.
#
# Addressing (Documentation/collectives.md): rank r owns one address,
# 10.99.0.(r+1), put as a /32 on every port of its device, and a host route
# to each peer through the port cabled to that peer.  libgcoll's verbs
# endpoints listen on the wildcard address and publish the rank's address;
# rdma_cm resolves each peer through its route to the port (and RoCE GID)
# that faces it.  Last, two devices joined by two cables, a subnet per
# cable, with GCOLL_NRAILS=2: a rail per port, and both ports' counters
# move in proportion.  Output: TAP.
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/gcoll_lib.sh"
FIRST_DEV=${FIRST_DEV:-64}
MAX_RANKS=4
PORT=29600

NR=0
trap mesh_cleanup EXIT
tap_start
gib_load && modprobe -q rdma_ucm || { t_fail "load gaudi_ib and rdma_ucm"; tap_done; exit 1; }
need_test_bin gcoll-perf "$PERF"
mark=$(dmesg | wc -l)
for n in 3 4; do
	NR=$n
	if ! out=$(mesh_setup "$n" 2>&1); then
		t_fail "$n devices with $((n - 1)) ports each, cabled in a full mesh" "$out"
		mesh_cleanup
		continue
	fi
	t_ok "$n devices with $((n - 1)) ports each, cabled in a full mesh, one address per rank"
	declare -A tx0=()
	for ((r = 0; r < n; r++)); do
		for ((p = 1; p < n; p++)); do
			tx0[$r.$p]=$(ib_counter "gaudi_$(dev $r)" "$p" tx_bytes)
		done
	done
	if perfn "$n" out -C allreduce -b 8 -e 4M -f 8 -n 3 -w 1 -c 1; then
		perf_ok "$n ranks: all-reduce fp32 sum HBM to HBM, 8 B to 4 MiB" "$out"
		native_ok "$n ranks" "$out"
	else
		t_fail "$n ranks: all-reduce fp32 sum HBM to HBM, 8 B to 4 MiB" "$out" "$PERF_ERR"
	fi
	# a ring or recursive schedule uses every link at least once
	idle=
	for ((r = 0; r < n; r++)); do
		for ((p = 1; p < n; p++)); do
			[ "$(ib_counter "gaudi_$(dev $r)" "$p" tx_bytes)" -gt "${tx0[$r.$p]}" ] ||
				idle+=" gaudi_$(dev $r)/$p"
		done
	done
	[ -z "$idle" ] && t_ok "$n ranks: every port sent data" ||
		t_fail "$n ranks: every port sent data" "idle:$idle"
	for spec in "allgather int32" "reducescatter float" "broadcast double" "reduce int64" \
		    "alltoall uint8"; do
		set -- $spec
		if perfn "$n" out -C "$1" -d "$2" -b 8 -e 1M -f 32 -n 2 -w 1 -c 1; then
			perf_ok "$n ranks: $1 $2 HBM to HBM, 8 B to 1 MiB" "$out"
		else
			t_fail "$n ranks: $1 $2 HBM to HBM, 8 B to 1 MiB" "$out" "$PERF_ERR"
		fi
	done
	mesh_cleanup
done
# two devices joined by two cables, one subnet per cable: GCOLL_NRAILS=2
# puts a rail on each port and stripes rendezvous writes over both
rails_setup() {
	local r p
	NR=2
	for ((r = 0; r < 2; r++)); do
		gn_new_device "$(dev $r)" 2 || return 1
		ip netns add "$(ns $r)" || return 1
		ip -n "$(ns $r)" link set lo up
		for ((p = 0; p < 2; p++)); do
			ip link set "gn$(dev $r)p$p" netns "$(ns $r)" || return 1
		done
	done
	for ((p = 0; p < 2; p++)); do
		gn_link "$(ns 0)" "gn$(dev 0)p$p" "$(ns 1)" "gn$(dev 1)p$p" || return 1
		for ((r = 0; r < 2; r++)); do
			ip -n "$(ns $r)" addr add "10.98.$p.$((r + 1))/24" dev "gn$(dev $r)p$p"
			ip -n "$(ns $r)" link set "gn$(dev $r)p$p" up
		done
	done
	for ((r = 0; r < 2; r++)); do
		for ((p = 0; p < 2; p++)); do
			wait_carrier "$(ns $r)" "gn$(dev $r)p$p" 1 || return 1
			ib_wait_active "gaudi_$(dev $r)" $((p + 1)) || return 1
		done
	done
}
NR=2
if out=$(rails_setup 2>&1); then
	t_ok "2 devices joined by 2 cables, a subnet per cable"
	a1=$(ib_counter "gaudi_$(dev 0)" 1 tx_bytes) a2=$(ib_counter "gaudi_$(dev 0)" 2 tx_bytes)
	addr() { echo "10.98.0.$(($1 + 1))"; }
	if GCOLL_NRAILS=2 perfn 2 out -C allreduce -b 1M -e 16M -f 4 -n 3 -w 1 -c 1; then
		perf_ok "2 rails: all-reduce fp32 sum HBM to HBM, 1 to 16 MiB" "$out"
		d1=$(( $(ib_counter "gaudi_$(dev 0)" 1 tx_bytes) - a1 ))
		d2=$(( $(ib_counter "gaudi_$(dev 0)" 2 tx_bytes) - a2 ))
		# striped writes: the two ports within a factor 1.5 of each other
		if grep -q 'rails 2' <<<"$out" && [ "$d1" -gt 0 ] && [ "$d2" -gt 0 ] &&
		   [ $((d1 * 2)) -le $((d2 * 3)) ] && [ $((d2 * 2)) -le $((d1 * 3)) ]; then
			t_ok "2 rails: both ports carried the data in proportion (port 1 $d1 B, port 2 $d2 B)"
		else
			t_fail "2 rails: both ports carry the data in proportion" \
				"port 1 $d1 B, port 2 $d2 B" "$(grep '^# gcoll-perf' <<<"$out")"
		fi
	else
		t_fail "2 rails: all-reduce fp32 sum HBM to HBM, 1 to 16 MiB" "$out" "$PERF_ERR"
	fi
else
	t_fail "2 devices joined by 2 cables, a subnet per cable" "$out"
fi
mesh_cleanup

dmesg_check "$mark"
tap_done
