#!/usr/bin/env bash
# hardening.sh - the engine against a hostile process and hostile frames
# (tests/rdma/hardening_test.c): WQEs rewritten in the mmap'd send queue
# after posting must not change what goes on the wire.  The kernel log
# must stay free of warnings.  Output: TAP.
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
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
dmesg_mark=$(dmesg | wc -l)
while IFS= read -r line; do
	case "$line" in
	"ok "*) t_ok "${line#ok [0-9]* - }" ;;
	"not ok "*) t_fail "${line#not ok [0-9]* - }" ;;
	*) diag "$line" ;;
	esac
done < <(timeout 200 "$bin" "$IB_A" "$GID_A" "$IB_B" "$GID_B" 2>&1 |
	 grep -v '^TAP version\|^1\.\.')
diag "$IB_A: $(ib_stats "$IB_A" 1)"
new=$(dmesg | tail -n +"$((dmesg_mark + 1))")
if grep -q "BUG:\|Oops\|WARNING:\|UBSAN\|KASAN" <<<"$new"; then
	t_fail "no kernel warning" "$(grep -A5 "BUG:\|Oops\|WARNING:\|UBSAN\|KASAN" <<<"$new" | head -n 30)"
else
	t_ok "no kernel warning"
fi
tap_done
