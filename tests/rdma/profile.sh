#!/usr/bin/env bash
# profile.sh - where the guest's CPU time goes during one perftest run
# between two gaudi devices (not part of make check: a developer's tool).
# perf samples every CPU with the cpu-clock software event (TCG has no
# PMU) for the whole client run, then prints the symbols and the
# commands that took the samples.  Run in the guest, for example:
#   echo 'profile 600 tests/rdma/profile.sh' > build/profile.list
#   tools/testenv/inroot.sh tools/testenv/vm.sh /build/profile.list /build/results/profile
# and read build/results/profile/profile.log.  PERFTEST (default
# "ib_write_bw -F -s 65536 -n 40000 -m 4096") is the test and its options;
# the run should last several seconds, so that set-up is a small share.
# Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-44}
DEV_B=${DEV_B:-45}
. "$here/lib.sh"

trap rdma_env_cleanup EXIT
RDMA_MTU=${RDMA_MTU:-9000}
tap_env_start rdma_env_setup
command -v perf >/dev/null || { t_skip "profile" "no perf in the root (linux-perf)"; tap_done; exit 0; }
read -r -a cmd <<<"${PERFTEST:-ib_write_bw -F -s 65536 -n 40000 -m 4096}"
ns_a "${cmd[@]}" -d "$IB_A" -x "$GID_A" >/tmp/gn-prof-s.log 2>&1 &
wait_listen "$NS_A" 18515 || sleep 1
if perf record -q -a -g -e cpu-clock -F 1000 -o /tmp/gn-prof.data -- \
	ip netns exec "$NS_B" "${cmd[@]}" -d "$IB_B" -x "$GID_B" "$IP_A" >/tmp/gn-prof-c.log 2>&1; then
	t_ok "${cmd[*]} under perf record"
else
	t_fail "${cmd[*]} under perf record" "$(tail -n 20 /tmp/gn-prof-c.log)"
fi
wait
diag "$(grep -A1 -E 'BW average|t_typical' /tmp/gn-prof-c.log)"
diag "symbols (self time, with callers):"
diag "$(perf report -i /tmp/gn-prof.data --no-children --sort sym --stdio 2>/dev/null | grep '%' | head -n 80)"
diag "commands:"
diag "$(perf report -i /tmp/gn-prof.data --no-children --sort comm -g none --stdio 2>/dev/null | grep '%' | head -n 12)"
diag "CPUs and commands:"
diag "$(perf report -i /tmp/gn-prof.data --no-children --sort cpu,comm -g none --stdio 2>/dev/null | grep '%' | head -n 16)"
tap_done
