#!/usr/bin/env bash
# mpi.sh - Open MPI over its RDMA paths on the device (issue 35): two
# ranks, one on gaudi_$DEV_A in $NS_A and one on gaudi_$DEV_B in $NS_B,
# across the cable, running tests/rdma/mpi_check.c (point to point from
# 1 B to 1 MiB both ways, nonblocking both at once, MPI_Allreduce of
# int64 and fp32, MPI_Bcast; every byte checked).  mpirun starts both
# ranks in $NS_A and collectives/bench/mpi_netns.sh moves rank 1 to $NS_B
# and gives each rank its own device.
#  - pml cm with mtl ofi over libfabric's verbs;ofi_rxm: every check, and
#    the bytes crossed gaudi_$DEV_A's port (not shared memory or TCP);
#  - pml ucx (UCX 1.18, rc_verbs and ud_verbs, shared memory excluded: the
#    two ranks are on one kernel): every check, the lanes UCX chose are
#    verbs on the gaudi devices, the bytes crossed gaudi_$DEV_A's port and
#    UCX reported no error.  Issue 35: its UD wire-up never completed
#    while the provider left wc.sl 0 (UCX 1.18 takes a UD datagram's
#    address family from it and dropped every one), and its rc_verbs
#    endpoint flush, a zero-length RDMA WRITE to rkey 0, took the QPs to
#    ERR while the engine checked that rkey.  Then with ud_verbs alone.
# Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-80}
DEV_B=${DEV_B:-81}
. "$here/lib.sh"
MAXB=${MPI_MAXB:-1048576}
# one run again of the pml ucx case on one unexplained symptom (below)
MPI_UCX_RERUN=${MPI_UCX_RERUN:-1}

trap 'rm -rf "$work"; rdma_env_cleanup' EXIT
dmesg_mark=$(dmesg | wc -l)
tap_env_start rdma_env_setup
t_ok "environment: $IB_A ($IF_A in $NS_A) cabled to $IB_B ($IF_B in $NS_B)"
work=$(mktemp -d)
if ! mpicc -O2 -Wall -Wextra -Werror -o "$work/mpi_check" \
	/src/tests/rdma/mpi_check.c 2>"$work/mpicc.err"; then
	t_fail "mpi_check builds with mpicc" "$(cat "$work/mpicc.err")"
	tap_done
	exit 1
fi

# mpi2 OUT ENV0 ENV1 MPIRUN_ARGS...: mpi_check on 2 ranks, rank r with the
# environment words ENVr, output (both streams) in OUT; mpirun's status
mpi2() {
	local out=$1 e0=$2 e1=$3
	shift 3
	ip netns exec "$NS_A" timeout 300 mpirun --allow-run-as-root \
		--bind-to none -np 2 -x MPI_NETNS_0= -x MPI_NETNS_1="$NS_B" \
		-x MPI_ENV_0="$e0" -x MPI_ENV_1="$e1" "$@" \
		/src/collectives/bench/mpi_netns.sh "$work/mpi_check" "$MAXB" \
		>"$out" 2>&1
}

# --- pml cm, mtl ofi, verbs;ofi_rxm: each rank on its own device
tx0=$(ib_counter "$IB_A" 1 tx_bytes)
mpi2 "$work/ofi" "FI_VERBS_DEVICE_NAME=$IB_A" "FI_VERBS_DEVICE_NAME=$IB_B" \
	-x "FI_PROVIDER=verbs;ofi_rxm" --mca pml cm --mca mtl ofi \
	--mca mtl_ofi_provider_include "verbs;ofi_rxm"
rc=$?
t_expect "mtl ofi: mpirun exit status" 0 "$rc"
ksft_relay mpi_check " (mtl ofi)" < "$work/ofi"
tx1=$(ib_counter "$IB_A" 1 tx_bytes)
# rank 0 sends every point-to-point size and half of each all-reduce
want=$((MAXB * 2))
if [ $((tx1 - tx0)) -ge "$want" ]; then
	t_ok "mtl ofi: $IB_A port 1 sent $((tx1 - tx0)) bytes (at least $want)"
else
	t_fail "mtl ofi: $IB_A port 1 sent at least $want bytes" "tx_bytes $tx0 -> $tx1"
fi

# --- pml ucx: rc_verbs and ud_verbs on each rank's own device, no shm.
# A UD peer that never answers ends the job after UCX_UD_VERBS_TIMEOUT
# (30 s by default).
# ucx_run OUT [UCX_LOG_LEVEL]: the rc_verbs/ud_verbs run; mpirun's status
ucx_run() {
	mpi2 "$1" "UCX_NET_DEVICES=$IB_A:1" "UCX_NET_DEVICES=$IB_B:1" \
		-x UCX_TLS=rc_verbs,ud_verbs,self -x UCX_UD_VERBS_TIMEOUT=10s \
		-x UCX_LOG_LEVEL="${2:-info}" --mca pml ucx --mca osc ^ucx \
		--mca btl ^vader,tcp
}
# what the ports and their netdevs look like now, for a failure's record
port_states() {
	local d
	for d in "$IB_A" "$IB_B"; do
		echo "$d port 1: $(cat /sys/class/infiniband/"$d"/ports/1/state 2>&1)," \
			"$(cat /sys/class/infiniband/"$d"/ports/1/phys_state 2>&1)"
	done
	ns_a ip -br link show "$IF_A"
	ns_b ip -br link show "$IF_B"
}
tx0=$(ib_counter "$IB_A" 1 tx_bytes)
ucx_run "$work/ucx"
rc=$?
# Once in CI (2026-11-29), beside other tests, rank 1's UCX found its
# device "not available" (a port that is not ACTIVE or whose md did not
# open: UCX says which only at trace level) while the mtl ofi run just
# before and the ud_verbs run just after used both ports; 3 runs alone
# and 3 beside devices created and deleted over and over did not show it
# again.  Until it is explained: the evidence on diagnostic lines (the
# ports' states at once, the same run at UCX's trace level: its lines
# about the ports and devices), then one run again that decides.
if [ "$rc" != 0 ] && rerun_wanted MPI_UCX_RERUN "network device '.*' is not available" \
		"$(tr -d '\0' < "$work/ucx")" "pml ucx" "a rank's UCX found its device not available"; then
	diag "$(grep -a "is not available" "$work/ucx" | head -n 2)"
	diag "$(port_states)"
	ucx_run "$work/ucx-trace" trace
	diag "$(grep -a "$IB_A\|$IB_B" "$work/ucx-trace" | grep -a \
		"is not active\|has no gid\|invalid gid\|md open\|initialized device\|is not available\|closing md" |
		head -n 40)"
	ucx_run "$work/ucx"
	rc=$?
fi
tx1=$(ib_counter "$IB_A" 1 tx_bytes)
if [ "$rc" = 0 ]; then
	t_ok "pml ucx: mpirun exit status 0"
else
	why=$(grep -a -m1 -o 'Fatal: .*\|Error: .*\|ERROR .*' "$work/ucx")
	t_fail "pml ucx: mpirun exit status 0" "status $rc: ${why:-no message}"
fi
if grep -aq '^# mpi_check: 2 ranks, every check passed' "$work/ucx"; then
	ksft_relay mpi_check " (pml ucx)" < "$work/ucx"
else
	t_fail "pml ucx: mpi_check passes every check" "$(tail -n 40 "$work/ucx")"
fi
lanes=$(grep -ao 'inter-node cfg#[0-9]* tag([^)]*)' "$work/ucx" | sort -u | tr '\n' ' ')
case $lanes in
*verbs/gaudi_*) t_ok "pml ucx: the ranks talk through $lanes" ;;
*) t_fail "pml ucx: the ranks talk through gaudi ports" "${lanes:-none shown}" ;;
esac
if [ $((tx1 - tx0)) -ge "$want" ]; then
	t_ok "pml ucx: $IB_A port 1 sent $((tx1 - tx0)) bytes (at least $want)"
else
	t_fail "pml ucx: $IB_A port 1 sent at least $want bytes" "tx_bytes $tx0 -> $tx1"
fi
# an error completion or async event, even after every check passed
errs=$(grep -a 'UCX  ERROR\|IB Async event' "$work/ucx")
if [ -z "$errs" ]; then
	t_ok "pml ucx: UCX reported no error"
else
	t_fail "pml ucx: UCX reported no error" "$(head -n 10 <<<"$errs")"
fi

# --- pml ucx over ud_verbs alone: every message a UD datagram (the data
# path, not only the wire-up, of the transport issue 35 was about)
mpi2 "$work/ud" "UCX_NET_DEVICES=$IB_A:1" "UCX_NET_DEVICES=$IB_B:1" \
	-x UCX_TLS=ud_verbs,self -x UCX_UD_VERBS_TIMEOUT=10s \
	-x UCX_LOG_LEVEL=info --mca pml ucx --mca osc ^ucx --mca btl ^vader,tcp
rc=$?
if [ "$rc" = 0 ] && grep -aq '^# mpi_check: 2 ranks, every check passed' "$work/ud"; then
	t_ok "pml ucx, ud_verbs only: mpi_check passes every check"
else
	why=$(grep -a -m1 -o 'Fatal: .*\|Error: .*\|ERROR .*' "$work/ud")
	t_fail "pml ucx, ud_verbs only: mpi_check passes every check" \
		"status $rc: ${why:-no message}" "$(tail -n 40 "$work/ud")"
fi
lanes=$(grep -ao 'inter-node cfg#[0-9]* tag([^)]*)' "$work/ud" | sort -u | tr '\n' ' ')
case $lanes in
*ud_verbs/gaudi_*) t_ok "pml ucx, ud_verbs only: the ranks talk through $lanes" ;;
*) t_fail "pml ucx, ud_verbs only: the ranks talk through gaudi ports" "${lanes:-none shown}" ;;
esac

dmesg_check "$dmesg_mark"
tap_done
