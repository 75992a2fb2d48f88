#!/usr/bin/env bash
# demo.sh - what 'make demo' runs in the guest: load the drivers and show
# the stack at work, one step at a time, with the commands it runs.
set -u
B=/build
step() { printf '\n\033[1;34m== %s\033[0m\n' "$*"; }
run() { printf '\033[1m$ %s\033[0m\n' "$*"; "$@"; }
missing() { printf '(%s is not built in this tree: skipping this step)\n' "$1"; }
fail() { printf '\033[1;31mdemo: %s\033[0m\n' "$*"; exit 1; }

GN_KO=$B/kmod/drivers/accel/gaudi_nic/gaudi_nic.ko
SIM_KO=$B/kmod/drivers/accel/gaudi_nic/sim/gaudi_nic_sim.ko
GIB_KO=$B/kmod/drivers/infiniband/hw/gaudi/gaudi_ib.ko
export LD_LIBRARY_PATH=$B/prefix/lib
export RDMAV_DRIVERS=$B/prefix/lib/libibverbs/libgaudi
SYS=/sys/bus/platform/drivers/gaudi_nic_sim

step "Kernel $(uname -r) under qemu TCG; loading gaudi_nic.ko, and gaudi_nic_sim.ko (the emulated ASIC) with two devices"
modprobe -q drm || fail "cannot load drm"
run insmod "$GN_KO" || fail "insmod gaudi_nic.ko failed (see dmesg)"
run insmod "$SIM_KO" num_devices=2 || fail "insmod gaudi_nic_sim.ko failed (see dmesg)"
run ls -l /dev/accel/
for d in 0 1; do
	a=/sys/bus/platform/devices/gaudi_nic.$d/gaudi_nic
	printf 'gaudi_nic.%s: serial %s, %s MiB HBM at bus address 0x%x, %s ports\n' "$d" \
		"$(cat $a/serial)" "$(( $(cat $a/hbm_size) >> 20 ))" "$(cat $a/bus_base)" \
		"$(cat $a/num_ports)"
done

step "Device memory through hl-thunk: allocate, write through a CPU mapping, map, export as dma-buf"
run "$B/prefix/bin/hlthunk-example" gaudi_nic.0 || fail "hlthunk-example failed"

step "Each device's NIC ports are netdevs"
if [ ! -f /src/drivers/accel/gaudi_nic/eth_main.c ]; then
	missing "the Ethernet driver"
else
run ip -br link show
run ethtool -i gn0p0
run devlink dev info platform/gaudi_nic.0
run devlink port show

step "A cable from gn0p0 to gn1p0, each end in its own network namespace"
ip netns add left && ip netns add right
ip -n left link set lo up && ip -n right link set lo up
ip link set gn0p0 netns left && ip link set gn1p0 netns right
exec {l}</run/netns/left {r}</run/netns/right
a=$(ip netns exec left cat /sys/class/net/gn0p0/ifindex)
b=$(ip netns exec right cat /sys/class/net/gn1p0/ifindex)
run sh -c "echo '$l:$a $r:$b' > $SYS/link_device" || fail "link_device refused the cable"
ip -n left addr add 192.0.2.1/24 dev gn0p0 && ip -n left link set gn0p0 up
ip -n right addr add 192.0.2.2/24 dev gn1p0 && ip -n right link set gn1p0 up
sleep 1
run ip -n left -br link show gn0p0
run ip netns exec left ping -c 3 -i 0.2 192.0.2.2 || fail "no ping across the cable"
run ip netns exec left ethtool -S gn0p0 | grep -E 'tx_packets|rx_packets|roce' | head -8
fi

step "The same ports as RDMA devices"
if [ -d /src/drivers/infiniband/hw/gaudi ]; then
	modprobe -q ib_uverbs || fail "cannot load ib_uverbs"
	run insmod "$GIB_KO" || fail "insmod gaudi_ib.ko failed"
	sleep 1
	run rdma link show
	run ibv_devinfo -d gaudi_0
	step "ibv_rc_pingpong: RC SEND/RECV from gaudi_0 (namespace left) to gaudi_1 (right)"
	ip netns exec right ibv_rc_pingpong -d gaudi_1 -g 1 -n 20 >/tmp/pp-server.log 2>&1 &
	sleep 2
	run ip netns exec left ibv_rc_pingpong -d gaudi_0 -g 1 -n 20 192.0.2.2 || echo "(pingpong failed)"
	wait
	cat /tmp/pp-server.log
	run rdma statistic show link gaudi_0/1
else
	missing gaudi_ib.ko
fi

step "The main job: an all-reduce of HBM tensors, gaudi_0 (left) with gaudi_1 (right), over the cable"
if [ -x "$B/prefix/bin/gcoll-hbm-allreduce" ] && grep -q '^gaudi_ib ' /proc/modules; then
	modprobe -q rdma_ucm || fail "cannot load rdma_ucm"
	before=$(rdma statistic show link gaudi_0/1 | grep -o 'tx_bytes [0-9]*')
	# each rank: 4 MiB of HBM through hl-thunk, exported as dma-buf, filled
	# through the CPU mapping; libgcoll picks libfabric's verbs;ofi_rxm
	# on the gaudi port and registers the dma-buf with FI_MR_DMABUF
	ip netns exec right env RANK=1 WORLD_SIZE=2 MASTER_ADDR=192.0.2.1 MASTER_PORT=29400 \
		"$B/prefix/bin/gcoll-hbm-allreduce" 1 >/tmp/ar-right.log 2>&1 &
	run ip netns exec left env RANK=0 WORLD_SIZE=2 MASTER_ADDR=192.0.2.1 MASTER_PORT=29400 \
		"$B/prefix/bin/gcoll-hbm-allreduce" 0 || fail "the HBM all-reduce failed"
	wait $! || { cat /tmp/ar-right.log; fail "the HBM all-reduce failed on rank 1"; }
	cat /tmp/ar-right.log
	step "The bytes went over the RoCE port (gaudi_0 port 1; before: $before)"
	run rdma statistic show link gaudi_0/1
	step "gcoll-perf across the cable: all-reduce fp32, HBM to HBM, 2 ranks, results checked"
	ip netns exec right env RANK=1 WORLD_SIZE=2 MASTER_ADDR=192.0.2.1 MASTER_PORT=29401 \
		"$B/prefix/bin/gcoll-perf" -H 1 -b 4K -e 4M -f 4 -n 5 -w 1 -c 1 >/dev/null 2>&1 &
	run ip netns exec left env RANK=0 WORLD_SIZE=2 MASTER_ADDR=192.0.2.1 MASTER_PORT=29401 \
		"$B/prefix/bin/gcoll-perf" -H 0 -b 4K -e 4M -f 4 -n 5 -w 1 -c 1 || fail "gcoll-perf failed"
	wait
	if [ -d "$B/prefix/lib/python3/dist-packages/torch_gcoll" ]; then
		step "PyTorch: DDP training over the cable, backend gcoll, batches in HBM of each rank's device"
		# torch.distributed unmodified: init_process_group("gcoll") and
		# DistributedDataParallel; the gradients' all-reduce goes through
		# libgcoll over gaudi_0/gaudi_1 (verbs;ofi_rxm)
		# (TORCH_CPP_LOG_LEVEL: the guest cannot resolve the namespaces'
		# addresses, and TCPStore warns about each client's hostname)
		tenv=(WORLD_SIZE=2 MASTER_ADDR=192.0.2.1 MASTER_PORT=29402 USE_LIBUV=0 OMP_NUM_THREADS=1
		      TORCH_CPP_LOG_LEVEL=ERROR PYTHONPATH="$B/prefix/lib/python3/dist-packages")
		ex=/src/collectives/bindings/torch/examples/ddp_train.py
		ip netns exec right env RANK=1 "${tenv[@]}" python3 "$ex" --backend gcoll --steps 4 \
			--width 128 --hbm-device 1 >/tmp/ddp-right.log 2>&1 &
		run ip netns exec left env RANK=0 "${tenv[@]}" python3 "$ex" --backend gcoll --steps 4 \
			--width 128 --hbm-device 0 || fail "DDP training over gcoll failed"
		wait $! || { cat /tmp/ddp-right.log; fail "DDP training failed on rank 1"; }
	else
		missing "torch_gcoll"
	fi
else
	missing "gcoll-hbm-allreduce or gaudi_ib"
fi

step "Tear down: delete a device while its cable carries traffic, unload"
[ -d /run/netns ] && { ip netns exec left ping -f -w 3 192.0.2.2 >/dev/null 2>&1 & sleep 1; }
grep -q '^gaudi_ib ' /proc/modules && rmmod gaudi_ib
run sh -c "echo 1 > $SYS/del_device"
wait
[ -d /run/netns ] && { run ip -n right -br link show gn1p0 2>&1 || echo "(gn1p0 went with its device)"; }
run rmmod gaudi_nic
run rmmod gaudi_nic_sim
if dmesg | grep -E 'WARNING:|BUG:|Oops|refcount_t:' >/dev/null; then
	fail "the kernel log has a warning: $(dmesg | grep -E 'WARNING:|BUG:|Oops|refcount_t:' | head -n 3)"
fi
printf '\n\033[1;32mdemo: done, kernel log clean\033[0m\n'
