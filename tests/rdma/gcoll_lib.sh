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
