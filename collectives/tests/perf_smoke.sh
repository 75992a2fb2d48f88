#!/usr/bin/env bash
# perf_smoke.sh GCOLL_PERF - TAP smoke test of gcoll-perf: every collective
# with checking on (#wrong must be 0 for every size), in fork mode and under
# an "external launcher" (RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT).
set -uo pipefail
perf=${1:?usage: perf_smoke.sh path/to/gcoll-perf}
n=0 fail=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

check_table() {   # stdin: gcoll-perf output; all rows must have #wrong == 0
	awk '!/^#/ && NF >= 9 { rows++; if ($9 != 0) bad++ }
	     END { if (rows < 1 || bad) { print "rows " rows ", wrong " bad > "/dev/stderr"; exit 1 } }'
}

for c in allreduce allgather reducescatter broadcast reduce alltoall; do
	out=$("$perf" -C "$c" -b 8 -e 1M -f 16 -n 2 -w 1 -c 1 -g 3 -d float -o sum 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	echo "$out" | check_table
	ok $(( rc | $? )) "gcoll-perf -C $c -g 3: all sizes correct"
done
out=$("$perf" -b 8 -e 64K -f 8 -n 2 -w 1 -c 1 -g 2 -d int32 -o max 2>&1)
rc=$?
echo "$out" | check_table
ok $(( rc | $? )) "gcoll-perf allreduce int32 max -g 2"

# the matrix (-A): every collective x type x reduction, in and out of
# place, sizes 0 to 32 KiB, 3 ranks, every result checked
for prov in shm tcp; do
	out=$(GCOLL_PROVIDER=$prov "$perf" -A -b 0 -e 32K -f 32 -g 3 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	grep -Eq '^# matrix: (29[0-9]|[3-9][0-9][0-9]) combinations, [0-9]+ rows \(29[0-9] of size 0\), 0 wrong, 0 failed$' <<<"$out"
	ok $(( rc | $? )) "gcoll-perf -A over $prov, 3 ranks: every combination right, size 0 included"
done

# external launcher mode
port=$((20000 + RANDOM % 20000))
pids=()
for r in 0 1 2; do
	RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
		"$perf" -b 1K -e 256K -f 16 -n 2 -w 1 -c 1 > /tmp/gcoll-perf-ext.$r 2>&1 &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
sed 's/^/# /' /tmp/gcoll-perf-ext.0
check_table < /tmp/gcoll-perf-ext.0 || rc=1
ok $rc "gcoll-perf under an external launcher (RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT)"
rm -f /tmp/gcoll-perf-ext.*
echo "1..$n"
exit $fail
