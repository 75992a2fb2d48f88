#!/usr/bin/env bash
# vm2.sh LIST RESULTDIR - two machines: boot two guests of one vCPU each
# (TCG, the root's kernel) whose virtio-net NICs are joined by a wire on
# the host's loopback (every frame one guest's NIC sends arrives at the
# other's), and run the tests of LIST in both at once.  Runs inside the
# root (see inroot.sh).
#
# The wire (GAUDI_NIC_VM2_WIRE):
#  stream  (default) a qemu "stream" netdev, a connection from node 1 to
#          node 0 on a unix socket: no frame is lost, as on a RoCE fabric
#          with PFC, and no frame waits (over TCP, Nagle's algorithm held
#          small frames back: a 4 KiB all-reduce took 20-40 ms);
#  dgram   a qemu "dgram" socket pair (UDP): the host's socket buffers
#          drop frames under load, as a fabric without flow control
#          would, and RC recovers them by go-back-N (slowly: every loss
#          of a burst's tail costs an ACK timeout).
#
# Guest N (0 or 1) runs run-tests.sh LIST RESULTDIR/nodeN with GN_NODE=N
# in its environment; its NIC has MAC 52:54:00:96:00:0N.  A test finds its
# role in GN_NODE and meets the other node over the network
# (tests/multi/lib.sh).  The exit status is 0 only if both guests finished
# and every test passed in both; their consoles go to RESULTDIR.nodeN.log.
set -uo pipefail
kver=${GAUDI_NIC_VM_KVER:-${GAUDI_NIC_KVER:?run inside the test root}}
kernel=/boot/vmlinuz-$kver
mem=${GAUDI_NIC_VM2_MEM:-2G}
list=$1 out=$2
case "$list" in /*) ;; *) list=/src/$list ;; esac
case "$out" in /build/*) ;; *) echo "vm2.sh: RESULTDIR must be under /build (the guests write there)" >&2; exit 2 ;; esac
rm -rf "$out" "$out".node*.log; mkdir -p "$out"
if [ -d "$list" ]; then lists=("$list"/*.list); else lists=("$list"); fi
limit=${GAUDI_NIC_VM_LIMIT:-1800}
total=$(cat "${lists[@]}" | awk -v max="$limit" '!/^[[:space:]]*(#|$)/ { t += $2 }
	END { t += 300; print (t > max ? max : t) }')
# two ports on the loopback: the ends of a dgram wire
base=$((40000 + $$ % 10000 * 2))
wire_kind=${GAUDI_NIC_VM2_WIRE:-stream}
case $wire_kind in
stream) sock=/tmp/gn-vm2-$$.sock
	rm -f "$sock"
	wire_desc="stream on $sock, node 1 -> node 0 (lossless)" ;;
dgram) wire_desc="UDP 127.0.0.1:$base <-> :$((base + 1)) (lossy under load)" ;;
*) echo "vm2.sh: GAUDI_NIC_VM2_WIRE is stream or dgram, not '$wire_kind'" >&2; exit 2 ;;
esac
echo "# booting two guests (1 vCPU each) on $kernel, wire: $wire_desc (limit ${total}s)"
start=$(date +%s)
pids=()
for n in 0 1; do
	me=$((base + n)) peer=$((base + 1 - n))
	if [ "$wire_kind" = dgram ]; then
		wire="-netdev dgram,id=wire,local.type=inet,local.host=127.0.0.1,local.port=$me,remote.type=inet,remote.host=127.0.0.1,remote.port=$peer"
	elif [ "$n" = 0 ]; then
		# node 0 listens; its NIC has no peer until node 1 connects
		wire="-netdev stream,id=wire,server=on,addr.type=unix,addr.path=$sock"
	else
		# node 1 connects, and again every 200 ms until node 0 listens
		wire="-netdev stream,id=wire,server=off,reconnect-ms=200,addr.type=unix,addr.path=$sock"
	fi
	wire+=" -device virtio-net-pci,netdev=wire,mac=52:54:00:96:00:0$n"
	timeout --kill-after=20 "$total" vng --verbose --run "$kernel" --disable-kvm --force-9p \
		--cpus 1 --memory "$mem" --rwdir /build \
		--append "panic_on_warn=0 oops=panic log_buf_len=16M" --qemu-opts="$wire" \
		--exec "env GN_NODE=$n ${GAUDI_NIC_VM_ENV:-} /src/tools/testenv/run-tests.sh $list $out/node$n; echo \$? > $out/node$n/finished; dmesg > $out/node$n/dmesg.log" \
		</dev/null >"$out.node$n.log" 2>&1 &
	pids+=($!)
done
# progress: the guests' result lines, as they come, once each
declare -A shown=()
progress() {
	local n line
	for n in 0 1; do
		while IFS= read -r line; do
			[ -n "${shown[$n:$line]:-}" ] && continue
			shown[$n:$line]=1
			printf 'node%s: %s\n' "$n" "$line"
		done < <(grep -a -E '^(not )?ok [0-9]+ [^- ]' "$out.node$n.log" 2>/dev/null)
	done
}
while kill -0 "${pids[0]}" 2>/dev/null || kill -0 "${pids[1]}" 2>/dev/null; do
	sleep 2
	progress
done
wait "${pids[0]}"
wait "${pids[1]}"
rm -f "${sock:-}"
progress
echo "# guests ran for $(( $(date +%s) - start ))s"
rc=0
for n in 0 1; do
	if [ ! -f "$out/node$n/finished" ]; then
		echo "not ok - node$n: the guest did not finish (crash, hang or timeout)"
		echo "# its console (${out#/}.node$n.log), last lines:"
		tail -n 30 "$out.node$n.log" | sed 's/^/#   /'
		echo "0 1 0" >"$out.node$n.counts.extra"
		rc=1
		continue
	fi
	[ "$(cat "$out/node$n/finished")" = 0 ] || rc=1
	for name in $(grep -a -E '^not ok [0-9]+ ' "$out.node$n.log" | awk '{ print $4 }'); do
		echo "# ---- node$n: $name, its failed checks (${out#/}/node$n/$name.log):"
		grep -a -E -A8 '^[# ]*not ok ' "$out/node$n/$name.log" 2>/dev/null | head -n 40 | sed 's/^/#   /'
	done
done
exit "$rc"
