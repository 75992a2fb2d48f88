#!/usr/bin/env bash
# gcoll_lib.sh - what the collectives tests on the device (gcoll.sh,
# gcoll_mesh.sh) share, on top of lib.sh.
PERF=${GCOLL_PERF:-/build/prefix/bin/gcoll-perf}

# perf_ok DESC OUT: ok if gcoll-perf's output OUT (rank 0's) has result
# lines and every one has #wrong 0; else the output and $PERF_ERR (the
# ranks' stderr, set by the launcher) in the failure report
perf_ok() {
	local rows bad
	rows=$(grep -c '^ *[0-9]' <<<"$2")
	bad=$(awk '/^ *[0-9]/ && $NF != 0' <<<"$2")
	if [ "$rows" -gt 0 ] && [ -z "$bad" ]; then
		t_ok "$1: $rows sizes, every result right"
	else
		t_fail "$1" "$2" "$PERF_ERR"
	fi
}

# native_ok WHO OUT: ok if gcoll-perf's header in OUT (rank 0's output)
# says libgcoll chose verbs;ofi_rxm by itself and registered the HBM
# buffers natively (dma-buf MRs, nothing staged)
native_ok() {
	if grep -q 'provider verbs;ofi_rxm.*buffers HBM, dma-buf MR native' <<<"$2"; then
		t_ok "$1: verbs;ofi_rxm chosen by default, HBM registered natively"
	else
		t_fail "$1: verbs;ofi_rxm chosen by default, HBM registered natively" \
			"$(grep '^# gcoll-perf' <<<"$2")"
	fi
}

# rxm_repost_crash FILE: true if the stack gcoll-perf printed in FILE for a
# fatal signal starts in Debian's libfabric 2.1 at rxm_post_recv's call of
# fi_recv on a closed endpoint (+0xc71d7).  ofi_rxm reposts a receive
# there when it closes a connection with that connection's messages still
# queued (a peer's disconnect, a device reset); upstream fixed it after
# 2.1 (697688386).  libgcoll cannot prevent it when the connection breaks
# under it; its clean destroy avoids it (Documentation/collectives.md).
rxm_repost_crash() { grep -A3 'fatal signal, stack' "$1" | grep -q 'libfabric\.so\.1(+0xc71d7)'; }

# perf_error FILE: gcoll-perf's first "failed: ERROR (WHY)" line in FILE,
# if WHY (gcoll_get_last_error()) says something; else nothing.  A rank
# that fails must say why: "communicator aborted ()" told nobody anything
perf_error() { grep -a -m1 -o 'failed: .* ([^)].*)$' "$1"; }

# ---- the full mesh (gcoll_mesh.sh, gcoll_bench_mesh.sh): rank r on device
# FIRST_DEV+r with N-1 ports in namespace gm-r, one cable per pair of
# devices; rank r's address 10.99.0.(r+1) as a /32 on every port, and a
# host route to each peer through the port cabled to it.  The caller sets
# FIRST_DEV and PORT (perfn's bootstrap ports start above it).
dev() { echo $((FIRST_DEV + $1)); }
ns() { echo "gm-$1"; }
addr() { echo "10.99.0.$(($1 + 1))"; }
# port of rank $1's device that faces rank $2
port_to() { if [ "$2" -lt "$1" ]; then echo "$2"; else echo $(($2 - 1)); fi; }

mesh_cleanup() {
	local r
	for ((r = 0; r < NR; r++)); do
		ip netns pids "$(ns $r)" 2>/dev/null | xargs -r kill 2>/dev/null
	done
	sleep 0.2
	for ((r = 0; r < NR; r++)); do
		ip netns del "$(ns $r)" 2>/dev/null
		gn_del_device "$(dev $r)" 2>/dev/null
	done
	NR=0
	return 0
}

# mesh_setup N: N devices with N-1 ports each, cabled in a full mesh, at
# MTU $MESH_MTU (1500)
mesh_setup() {
	local n=$1 r p i
	NR=$n
	for ((r = 0; r < n; r++)); do
		gn_new_device "$(dev $r)" $((n - 1)) || return 1
		ip netns add "$(ns $r)" || return 1
		ip -n "$(ns $r)" link set lo up
		for ((p = 0; p < n - 1; p++)); do
			ip link set "gn$(dev $r)p$p" netns "$(ns $r)" || return 1
		done
	done
	for ((r = 0; r < n; r++)); do
		for ((i = r + 1; i < n; i++)); do
			gn_link "$(ns $r)" "gn$(dev $r)p$(port_to $r $i)" \
				"$(ns $i)" "gn$(dev $i)p$(port_to $i $r)" || return 1
		done
	done
	for ((r = 0; r < n; r++)); do
		for ((p = 0; p < n - 1; p++)); do
			ip -n "$(ns $r)" addr add "$(addr $r)/32" dev "gn$(dev $r)p$p"
			ip -n "$(ns $r)" link set "gn$(dev $r)p$p" mtu "${MESH_MTU:-1500}" || return 1
			ip -n "$(ns $r)" link set "gn$(dev $r)p$p" up
		done
		for ((i = 0; i < n; i++)); do
			[ "$i" = "$r" ] && continue
			ip -n "$(ns $r)" route add "$(addr $i)/32" dev "gn$(dev $r)p$(port_to $r $i)" ||
				return 1
		done
	done
	for ((r = 0; r < n; r++)); do
		for ((p = 0; p < n - 1; p++)); do
			wait_carrier "$(ns $r)" "gn$(dev $r)p$p" 1 || return 1
			ib_wait_active "gaudi_$(dev $r)" $((p + 1)) || return 1
		done
	done
}

# perf_err_tail FILE: what to show of a rank's stderr: the whole stack of
# a rank that died of a signal (gcoll-perf prints it, innermost frame
# first), else the last lines
perf_err_tail() {
	if grep -q '^gcoll-perf: fatal signal' "$1"; then
		sed -n '/^gcoll-perf: fatal signal/,$p' "$1" | head -n 50
	else
		tail -n 6 "$1"
	fi
}

# perfn N OUTVAR ARGS...: gcoll-perf on N ranks, rank r in its namespace
# on HBM of its own device; OUTVAR gets rank 0's output, PERF_ERR every
# rank's stderr tail.  PERFN_TCP=1: over libfabric's tcp provider on each
# rank's first port instead (its address reaches every peer by the host
# routes); PERFN_TIMEOUT: seconds per rank (300).
perfn() {
	local n=$1 __out=$2 r pids=() rc=0 tmp tcp
	shift 2
	tmp=$(mktemp -d)
	PORT=$((PORT + 1))
	for ((r = 0; r < n; r++)); do
		tcp=()
		[ "${PERFN_TCP:-0}" = 1 ] && tcp=(GCOLL_PROVIDER=tcp GCOLL_IFACE="gn$(dev $r)p0")
		ip netns exec "$(ns $r)" env RANK=$r WORLD_SIZE=$n MASTER_ADDR="$(addr 0)" \
			MASTER_PORT=$PORT "${tcp[@]}" timeout "${PERFN_TIMEOUT:-300}" "$PERF" \
			-H "$(dev $r)" "$@" >"$tmp/out.$r" 2>"$tmp/err.$r" &
		pids+=($!)
	done
	for ((r = 0; r < n; r++)); do
		wait "${pids[$r]}" || rc=1
	done
	printf -v "$__out" '%s' "$(cat "$tmp/out.0")"
	PERF_ERR=$(for ((r = 0; r < n; r++)); do echo "rank $r: $(perf_err_tail "$tmp/err.$r")"; done)
	rm -rf "$tmp"
	return $rc
}

# ---- benchmarks (gcoll_bench.sh, gcoll_bench_mesh.sh): a figure is a
# "size GB/s" line in $work/NAME, one per size and run; MINB, MAXB, RUNS
bench_sizes() { local s; for ((s = MINB; s <= MAXB; s *= 4)); do echo "$s"; done; }

# perf_busbw N: gcoll-perf's all-reduce rows (stdin, N ranks) as "size
# busbw" lines, busbw in GB/s recomputed from the time column (us) with
# nccl-tests' factor 2(N-1)/N: gcoll-perf prints 3 decimals, and at 8
# ranks or across machines small sizes are below 0.001 GB/s
perf_busbw() {
	awk -v n="$1" '!/^#/ && NF >= 9 && $6 > 0 { print $1, $1 / ($6 * 1e3) * 2 * (n - 1) / n }'
}

# bench_med NAME SIZE: "median min max" of NAME's figures at SIZE
bench_med() {
	awk -v s="$2" '$1 == s { print $2 }' "$work/$1" 2>/dev/null | sort -g |
		awk '{ v[NR] = $1 } END { if (!NR) { print "- - -"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.4g %.4g %.4g\n", m, v[1], v[NR] }'
}
bench_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }

# bench_ibw_figure NAME SIZE DIV OUTPUT [FLAGS]: ib_write_bw's average at
# SIZE in OUTPUT, divided by DIV, as a "size GB/s" line in $work/NAME; a
# sample of inf or 0.00 (perftest's clock calibration fails under TCG)
# or none at all is dropped, and the diagnostics say so
bench_ibw_figure() {
	local v
	# "#bytes #iterations BW peak BW average MsgRate" in MiB/s
	v=$(awk -v s="$2" '$1 == s && NF >= 5 { print $4 }' <<<"$4")
	if [ -n "$v" ] && [ "$v" != inf ] && awk -v v="$v" 'BEGIN { exit !(v > 0) }'; then
		awk -v s="$2" -v v="$v" -v d="$3" 'BEGIN { print s, v * 1048576 / 1e9 / d }' \
			>>"$work/$1"
	else
		diag "ib_write_bw ${5:+$5 }$2 B: no figure (inf, 0.00 or a failure), dropped: $(tail -n 3 <<<"$4")"
	fi
}

# bench_ibw NAME SRV_NS SRV_IB SRV_PORT SRV_GID CLI_NS CLI_IB CLI_PORT
# CLI_GID SRV_IP [-b]: ib_write_bw at every size, RUNS times, the server on
# SRV_IB's port SRV_PORT in SRV_NS; figures in $work/NAME.  With -b both
# sides write at once and perftest reports the sum of the two directions
# (print_full_bw_report adds the remote side's): NAME gets one direction's
# share, half of it.
bench_ibw() {
	local name=$1 sns=$2 sib=$3 sport=$4 sgid=$5 cns=$6 cib=$7 cport=$8 cgid=$9 sip=${10}
	local bidi=("${@:11}") s i n out div=1
	[ ${#bidi[@]} -gt 0 ] && div=2
	for s in $(bench_sizes); do
		n=$(( (256 << 20) / s )); ((n > 1000)) && n=1000; ((n < 5)) && n=5
		for ((i = 0; i < RUNS; i++)); do
			ip netns exec "$sns" timeout 300 ib_write_bw -d "$sib" -i "$sport" -x "$sgid" -F \
				-s "$s" -n "$n" "${bidi[@]}" >"$work/ibw.s" 2>&1 &
			sleep 1
			out=$(ip netns exec "$cns" timeout 300 ib_write_bw -d "$cib" -i "$cport" \
				-x "$cgid" -F -s "$s" -n "$n" "${bidi[@]}" "$sip" 2>&1)
			wait
			bench_ibw_figure "$name" "$s" "$div" "$out" "${bidi[*]}"
		done
	done
	[ -s "$work/$name" ] && t_ok "ib_write_bw ${bidi[*]} $cib/$cport -> $sib/$sport at every size" ||
		t_fail "ib_write_bw ${bidi[*]} ran" "$out"
}

# bench_gcolln NAME: RUNS runs of gcoll-perf's all-reduce, 4 KiB ($MINB)
# to $MAXB, on the $N ranks perfn starts (PERFN_TCP as set); busbw lines
# in $work/NAME
bench_gcolln() {
	local name=$1 i out
	for ((i = 0; i < RUNS; i++)); do
		if ! perfn "$N" out -b "$MINB" -e "$MAXB" -f 4 -n 5 -w 1 -c 0; then
			t_fail "$name ran" "$out" "$PERF_ERR"
			return
		fi
		perf_busbw "$N" <<<"$out" >>"$work/$name"
	done
	t_ok "$name, $RUNS runs: $(grep -m1 '^# gcoll-perf' <<<"$out" | sed 's/^# gcoll-perf allreduce: //')"
}

# bench_ceiling N: what this machine's CPUs allow an N-rank ring
# all-reduce's busbw, when the ranks' reductions and the emulated engines'
# copies share them (under TCG, fp32 arithmetic is emulated in software
# and every byte on a cable is copied by a CPU).  For S bytes the ranks
# add (N-1)S bytes of output and send 2(N-1)S bytes, each copied once, so
# on C CPUs with one CPU's add rate A and memcpy rate M, t >= (N-1)S(1/A
# + 2/M)/C, and busbw = 2(N-1)/N * S/t <= (2/N) C / (1/A + 2/M).  It
# leaves out per-packet work, polling and the progress engines, so real
# figures stay below it.  Sets CEIL (GB/s) and reports A and M.
bench_ceiling() {
	local bin=${MEMCPY_BW:-/build/tests-rdma-rel/memcpy_bw} m a
	CEIL=
	if ! m=$("$bin" 65536 1 2>&1) || ! a=$("$bin" -a 65536 1 2>&1); then
		t_fail "CPU references measured (memcpy_bw)" "${a:-$m}"
		return 1
	fi
	# "memcpy SIZE KiB: RATE MiB/s (...)", "fp32 add SIZE KiB: RATE MiB/s (...)"
	m=$(awk '{ print $4 }' <<<"$m") a=$(awk '{ print $5 }' <<<"$a")
	CEIL=$(awk -v n="$1" -v c="$(nproc)" -v m="$m" -v a="$a" 'BEGIN {
		a *= 1048576 / 1e9; m *= 1048576 / 1e9
		printf "%.3f", 2 / n * c / (1 / a + 2 / m) }')
	t_ok "CPU references, one CPU, 64 MiB buffers: memcpy $m MiB/s, fp32 add $a MiB/s;" \
		"$1-rank ceiling on $(nproc) CPUs $CEIL GB/s"
}

# bench_goals: issue 16's goals at the largest size against the ceiling
# (CEIL): 3 x Open MPI's busbw and 0.6 x ib_write_bw's
bench_goals() {
	local v mpi ibw
	read -r v _ <<<"$(bench_med verbs-hbm "$MAXB")"
	read -r mpi _ <<<"$(bench_med mpi "$MAXB")"
	read -r ibw _ <<<"$(bench_med ibw "$MAXB")"
	[ -n "$CEIL" ] && [ "$v" != - ] && [ "$mpi" != - ] && [ "$ibw" != - ] || return 0
	diag "ceiling at $MAXB B, ranks' reductions and engines' copies on $(nproc) CPUs (bench_ceiling): $CEIL GB/s" \
		"verbs-HBM $v GB/s, $(bench_ratio "$v" "$CEIL") of it; ceiling/MPI $(bench_ratio "$CEIL" "$mpi"), ceiling/ib_write_bw $(bench_ratio "$CEIL" "$ibw")" \
		"(the goals need verbs-HBM/MPI >= 3 and verbs-HBM/ib_write_bw >= 0.6: out of reach here where the ceiling's ratio is below them)"
}

# bench_table COL...: one line per size, each COL ("name=header=ratio
# header") as median (min-max) of $work/name, then the first COL's ratio
# to each of the others
bench_table() {
	local spec name hdr rh s m l h line names=() hdrs=() rhs=() meds
	for spec in "$@"; do
		IFS='=' read -r name hdr rh <<<"$spec"
		names+=("$name") hdrs+=("$hdr") rhs+=("$rh")
	done
	line=$(printf '%10s ' size)
	for hdr in "${hdrs[@]}"; do line+=$(printf ' %-29s' "$hdr"); done
	for rh in "${rhs[@]:1}"; do line+=$(printf ' %7s' "$rh"); done
	diag "$line"
	for s in $(bench_sizes); do
		line=$(printf '%10s ' "$s") meds=()
		for name in "${names[@]}"; do
			read -r m l h <<<"$(bench_med "$name" "$s")"
			meds+=("$m")
			line+=$(printf ' %-29s' "$m ($l-$h)")
		done
		for m in "${meds[@]:1}"; do line+=$(printf ' %7s' "$(bench_ratio "${meds[0]}" "$m")"); done
		diag "$line"
	done
}

# bench_mpi NAME NS0 TRANSPORT MPI_NETNS_0=NS... [MPI_ENV_r=...]: RUNS
# runs of Open MPI's all-reduce (collectives/bench/mpi_allreduce.c), one
# rank per MPI_NETNS_r, mpirun in namespace NS0, rank r moved into the
# namespace MPI_NETNS_r names (empty: stay) with the environment MPI_ENV_r
# adds (collectives/bench/mpi_netns.sh); figures in $work/NAME, errors in
# $work/NAME.err.  TRANSPORT: a subnet, pml ob1 with btl tcp,self on it;
# "ofi", pml cm with mtl ofi over libfabric's verbs;ofi_rxm (give each
# rank its device in MPI_ENV_r: FI_VERBS_DEVICE_NAME, and FI_VERBS_IFACE
# where the device has more than one port); or "ucx", pml ucx with UCX's
# rc_verbs and ud_verbs, no shared memory (MPI_ENV_r: UCX_NET_DEVICES).
# Oversubscribed only with more ranks than CPUs: it makes Open MPI yield
# when idle, which cost it up to 8 ms per all-reduce on the host.
bench_mpi() {
	local name=$1 ns0=$2 net=$3 i e bin=$work/mpi_allreduce xs=() over=() mca nr=0
	shift 3
	for e in "$@"; do
		xs+=(-x "${e%%=*}")
		case $e in MPI_NETNS_*) nr=$((nr + 1)) ;; esac
	done
	[ "$nr" -gt "$(nproc)" ] && over=(--oversubscribe)
	if [ "$net" = ofi ]; then
		mca=(-x "FI_PROVIDER=verbs;ofi_rxm" --mca pml cm --mca mtl ofi
		     --mca mtl_ofi_provider_include "verbs;ofi_rxm")
	elif [ "$net" = ucx ]; then
		mca=(-x UCX_TLS=rc_verbs,ud_verbs,self --mca pml ucx --mca osc ^ucx
		     --mca btl ^vader,tcp)
	else
		mca=(--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$net")
	fi
	if [ ! -x "$bin" ] && ! mpicc -O2 -o "$bin" /src/collectives/bench/mpi_allreduce.c 2>"$work/mpicc.err"; then
		t_fail "Open MPI: mpicc" "$(cat "$work/mpicc.err")"
		return 1
	fi
	: >"$work/$name.err"
	for ((i = 0; i < RUNS; i++)); do
		ip netns exec "$ns0" env "$@" timeout 900 \
			mpirun --allow-run-as-root --bind-to none "${over[@]}" -np "$nr" "${xs[@]}" \
			"${mca[@]}" \
			/src/collectives/bench/mpi_netns.sh "$bin" "$MINB" "$MAXB" 4 5 1 \
			>"$work/$name.out" 2>>"$work/$name.err" ||
			echo "mpirun: exit status $?" >>"$work/$name.err"
		# "bytes time_us algbw busbw" for every size
		awk -v lo="$MINB" '!/^#/ && $1 >= lo && NF >= 4 { print $1, $4 }' \
			"$work/$name.out" >>"$work/$name"
	done
}
