#!/usr/bin/env bash
# hardening.sh - the engine against a hostile process and hostile frames
# (tests/rdma/rewrite_test.c): WQEs rewritten in the mmap'd send queue
# after posting, RC ones awaiting retransmission and UD ones inside the
# doorbell, must not change what goes on the wire; then
# tests/rdma/hardening_test.c: a producer index
# moved back behind started WQEs is a fatal QP error, not a loop; the responder
# resources (max_dest_rd_atomic) are enforced; a 16 MiB READ at MTU 256 is
# answered once, in bursts, without overflowing the requester; an mmap()
# racing with the destroy of its ring (held open by the test module
# gaudi_nic_test_delay) maps the ring, not freed memory; forged READs
# and removed GIDs; the work per engine lock hold is capped; then
# tests/rdma/limits_test.c: the per-context limits (the device's
# max_*_per_ctx devlink params) stop one process and not another, and the
# kernel keeps its ids; the rdma cgroup limits a process, and the memory cgroup is
# charged for its rings; random uverbs commands and ring contents
# (verbs_fuzz) leave the device working and nothing allocated.  The
# kernel log must stay free of warnings.
# Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-46}
DEV_B=${DEV_B:-47}
. "$here/lib.sh"

trap rdma_env_cleanup EXIT
tap_env_start rdma_env_setup
t_ok "environment: $IB_A cabled to $IB_B"
# built by `make user` (tests/rdma/meson.build): the ASan+UBSan build
bin=${HARDENING_TEST:-/build/tests-rdma/hardening_test}
need_test_bin hardening_test "$bin"
lbin=${LIMITS_TEST:-/build/tests-rdma/limits_test}
need_test_bin limits_test "$lbin"
rbin=${REWRITE_TEST:-/build/tests-rdma/rewrite_test}
need_test_bin rewrite_test "$rbin"
DELAY_KO=${GAUDI_NIC_KMOD:-/build/kmod}/tests/kmod/gaudi_nic_test_delay.ko
if grep -q '^gaudi_nic_test_delay ' /proc/modules || insmod "$DELAY_KO"; then
	t_ok "load the delay injector gaudi_nic_test_delay"
else
	t_fail "load the delay injector gaudi_nic_test_delay" "insmod $DELAY_KO failed"
fi
# frames from the wire: roce_inject.py on B's port, towards A's port
mac_a=$(ns_a cat "/sys/class/net/$IF_A/address")
ns_b ip addr add 192.0.2.99/24 dev "$IF_B"
export INJECT="ip netns exec $NS_B python3 $here/roce_inject.py"
export INJECT_FOREIGN="$IF_B $mac_a 192.0.2.99 $IP_A" INJECT_PEER="$IF_B $mac_a $IP_B $IP_A"
ns_a ip -6 addr add 2001:db8:46::1/64 dev "$IF_A" nodad
ns_b ip -6 addr add 2001:db8:46::2/64 dev "$IF_B" nodad
export INJECT_PEER6="$IF_B $mac_a 2001:db8:46::2 2001:db8:46::1"
# gid_removed deletes A's address (its GID goes) and puts it back
export V6_DEL_A="ip netns exec $NS_A ip -6 addr del 2001:db8:46::1/64 dev $IF_A"
export V6_ADD_A="ip netns exec $NS_A ip -6 addr add 2001:db8:46::1/64 dev $IF_A nodad"
export FUZZ_SECS=${FUZZ_SECS:-15}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
# limit_reserve loads it while user contexts hold every QP they can get
export KULP_KO=${GAUDI_NIC_KMOD:-/build/kmod}/tests/kmod/gaudi_nic_test_kulp.ko
dmesg_mark=$(dmesg | wc -l)
ksft_relay rewrite_test < <(timeout 200 "$rbin" "$IB_A" "$GID_A" "$IB_B" "$GID_B" 2>&1)
ksft_relay hardening_test < <(timeout 200 "$bin" "$IB_A" "$GID_A" "$IB_B" "$GID_B" 2>&1)
ksft_relay limits_test < <(timeout 200 "$lbin" "$IB_A" "$GID_A" "$IB_B" "$GID_B" 2>&1)
diag "$IB_A: $(ib_stats "$IB_A" 1)"

# Per-process limits: the rdma cgroup controller, which ib_core applies to
# every uverbs object of every device.  A process held at its limit of 8
# objects leaves another, outside the cgroup, free to allocate 40.
cg=/sys/fs/cgroup
if ! grep -q " $cg cgroup2 " /proc/mounts; then
	mount -t cgroup2 none "$cg" 2>/dev/null
fi
if grep -qw rdma "$cg/cgroup.controllers" 2>/dev/null; then
	echo +rdma > "$cg/cgroup.subtree_control"
	mkdir -p "$cg/gn-limit"
	echo "$IB_A hca_handle=1 hca_object=8" > "$cg/gn-limit/rdma.max"
	held=$(mktemp)
	(echo $BASHPID > "$cg/gn-limit/cgroup.procs" &&
	 exec "$lbin" exhaust "$IB_A" 40 6) >"$held" 2>&1 &
	hpid=$!
	sleep 3
	free_out=$("$lbin" exhaust "$IB_A" 40 0 2>&1)
	wait "$hpid"
	read -r _ nheld _ eheld _ <"$held"
	read -r _ nfree _ <<<"$free_out"
	if [ "${nheld:-0}" -gt 0 ] && [ "$nheld" -le 8 ] && [ "$eheld" != 0 ] &&
	   [ "$nfree" = 40 ]; then
		t_ok "rdma cgroup: a process limited to 8 objects stops at $nheld PDs ($(cut -d' ' -f5- "$held")), another allocates $nfree meanwhile"
	else
		t_fail "rdma cgroup: a process at its limit leaves another able to work" "limited: $(cat "$held")" "free: $free_out"
	fi
	rm -f "$held"
	# Lift the limits before removing the cgroup: 6.12's rdma controller
	# frees an idle pool only when its limits are back to max, and one
	# left behind by rmdir stays on the device's list pointing into the
	# freed cgroup (list corruption at del_device, seen here).
	echo "$IB_A hca_handle=max hca_object=max" > "$cg/gn-limit/rdma.max"
	rmdir "$cg/gn-limit" 2>/dev/null
else
	t_skip "rdma cgroup limits" "the guest kernel has no rdma cgroup controller in $cg"
fi
# Ring memory is charged to the memory cgroup of the process that sized
# it: four CQs of 2^18 CQEs (8 MiB rings) show as 32 MiB of vmalloc in
# the cgroup of the process holding them.
if grep -qw memory "$cg/cgroup.controllers" 2>/dev/null; then
	echo +memory > "$cg/cgroup.subtree_control"
	mkdir -p "$cg/gn-mem"
	held=$(mktemp)
	(echo $BASHPID > "$cg/gn-mem/cgroup.procs" &&
	 exec "$lbin" bigcq "$IB_A" 4 20) >"$held" 2>&1 &
	hpid=$!
	for _ in $(seq 60); do
		grep -q '^cqs ' "$held" && break
		sleep 0.5
	done
	vm=$(awk '$1 == "vmalloc" { print $2 }' "$cg/gn-mem/memory.stat")
	kill "$hpid" 2>/dev/null
	wait "$hpid" 2>/dev/null
	read -r _ ncq _ <"$held"
	if [ "${ncq:-0}" = 4 ] && [ "${vm:-0}" -ge $((32 << 20)) ]; then
		t_ok "memory cgroup: 4 CQs of 8 MiB rings are charged to their process's cgroup (vmalloc $((vm >> 20)) MiB)"
	else
		t_fail "memory cgroup: CQ rings are charged to their process's cgroup" "bigcq: $(cat "$held")" "the cgroup's vmalloc: ${vm:-none} bytes"
	fi
	rm -f "$held"
	# and what the engine holds for MRs (N3): 256 registrations of one
	# 8 MiB buffer cost the engine 256 page arrays of 16 KiB, charged to
	# the process's cgroup as kernel memory, against a run with one
	kmem_with() {
		local n=$1 k out
		out=$(mktemp)
		(echo $BASHPID > "$cg/gn-mem/cgroup.procs" &&
		 exec "$lbin" manymr "$IB_A" "$n" 20) >"$out" 2>&1 &
		local pid=$!
		for _ in $(seq 120); do
			grep -q '^mrs ' "$out" && break
			sleep 0.5
		done
		k=$(awk '$1 == "kernel" { print $2 }' "$cg/gn-mem/memory.stat")
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		echo "$k $(cat "$out")"
		rm -f "$out"
	}
	read -r k1 _ n1 _ <<<"$(kmem_with 1)"
	read -r k256 _ n256 rest <<<"$(kmem_with 256)"
	if [ "${n1:-0}" = 1 ] && [ "${n256:-0}" = 256 ] &&
	   [ $((k256 - k1)) -ge $((3 << 20)) ]; then
		t_ok "memory cgroup: 255 more MRs of 8 MiB cost their process's cgroup $(((k256 - k1) >> 10)) KiB of kernel memory (the engine's page arrays: 4080 KiB)"
	else
		t_fail "memory cgroup: the engine's MR page arrays are charged to the process's cgroup" \
			"1 MR: ${n1:-?} registered, kernel ${k1:-?} bytes" \
			"256 MRs: ${n256:-?} registered ($rest), kernel ${k256:-?} bytes"
	fi
	rmdir "$cg/gn-mem" 2>/dev/null
else
	t_skip "memory cgroup accounting of rings" "the guest kernel has no memory cgroup controller in $cg"
fi
# Random uverbs commands and ring contents (tests/rdma/verbs_fuzz.c, the
# ASan+UBSan build), then a fresh RC pair works and, once the fuzzer has
# exited, nothing it made is left on the device.
fuzz=${VERBS_FUZZ:-/build/tests-rdma/verbs_fuzz}
need_test_bin verbs_fuzz "$fuzz"
res0=$(res_of "$IB_A")
fout=$(mktemp)
timeout $((${VERBS_FUZZ_SECS:-10} + 120)) "$fuzz" "$IB_A" "$GID_A" \
	"${VERBS_FUZZ_SECS:-10}" ${VERBS_FUZZ_SEED:-} >"$fout" 2>&1
rc=$?
ksft_relay verbs_fuzz " (verbs_fuzz)" <"$fout"
t_expect "verbs_fuzz exits 0 (1: a point failed, 124: timed out, >128: killed by a signal)" 0 "$rc"
rm -f "$fout"
res_back verbs_fuzz "$IB_A" "$res0"
dmesg_check "$dmesg_mark"
tap_done
