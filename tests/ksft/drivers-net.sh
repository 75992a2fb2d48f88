#!/usr/bin/env bash
# drivers-net.sh - Linux 6.12's own drivers/net selftests against our
# ports, through kselftest's runner (run_kselftest.sh), in the guest; and
# the tests of net/ that take a real device (net/forwarding's NETIFS ones,
# net/gro.sh -i, net/netdevice.sh).
#
# The selftests are installed by tests/ksft/build.sh into /build/ksft,
# unmodified but for the patches in tests/ksft/patches.  The setup is
# the "HW" mode of tools/testing/selftests/drivers/net/README.rst:
#   NETIF     gn30p0 in the initial namespace, 203.0.113.1, 2001:db8:100::1
#   remote    its cabled peer gn30p1 in netns ksft-rmt (REMOTE_TYPE=netns)
#   NETIFS    gn30p2-gn30p3 and gn30p4-gn30p5 cabled in pairs, for the
#             forwarding-library tests (hw/*.sh, KSELFTEST_<TEST>_ARGS)
#   NETIF_NO_CABLE  gn30p6, a port without a cable
# NETIF's addresses stay out of 192.0.2.0/24 and 198.51.100.0/24, which
# the forwarding tests (router.sh: both) use in the same namespace.
# Output: TAP from tests/ksft/ksft-report.py, one line per subtest, every
# skip with its reason; the tests that cannot apply to this device are
# listed, with why, as skips (NOT_RUN below).
set -u
here=$(cd "$(dirname "$0")" && pwd)
KSFT=${KSFT:-/build/ksft}
DEV=30
SPLIT_DEV=32
RNS=ksft-rmt
export NETIF=gn${DEV}p0
RIF=gn${DEV}p1
export LOCAL_V4=203.0.113.1 REMOTE_V4=203.0.113.2
export LOCAL_V6=2001:db8:100::1 REMOTE_V6=2001:db8:100::2
export REMOTE_TYPE=netns REMOTE_ARGS=$RNS
export NETIF_NO_CABLE=gn${DEV}p6
# shellcheck source=../net/lib.sh
. "$here/../net/lib.sh"

# Tests of drivers/net that cannot apply to this device, and why.
NOT_RUN=(
	"drivers/net/netcons_basic.sh=hardwired to netdevsim (it creates its own netdevsim ports and ignores NETIF); the Debian kernel has no CONFIG_NETDEVSIM"
	"drivers/net/hw/ethtool.sh=needs link modes and autonegotiation from a PHY; the emulated cable has no PHY, no link modes and no speed"
	"drivers/net/hw/pp_alloc_fail.py=injects page_pool allocation failures (fail_function): the driver does not use a page pool, and the Debian kernel has no CONFIG_FAIL_FUNCTION"
	"drivers/net/hw/hw_stats_l3.sh=needs L3 (router interface) HW statistics offload, a switch-ASIC feature; the NIC does not route"
	"drivers/net/hw/hw_stats_l3_gre.sh=needs L3 HW statistics offload of a GRE underlay, a switch-ASIC feature; the NIC does not route"
	"drivers/net/hw/ethtool_extended_state.sh: autoneg=needs autonegotiation (a PHY); the emulated cable has none"
	"drivers/net/hw/ethtool_extended_state.sh: autoneg_force_mode=needs forced link modes (a PHY); the emulated cable has none"
	# net/: the tests that take a real device, run once against our
	# ports on 2026-11-24 (Documentation/testing.md)
	"net/gro.sh=its device mode (-i DEV) needs NIC loopback (setup_loopback.sh: ethtool -K DEV loopback on); the MAC has no loopback mode ('loopback: off [fixed]', as drivers/net/hw/loopback.sh reports)"
	"net/forwarding/local_termination.sh=needs msend/mreceive (troglobit's mtools), which Debian does not package"
)
RUN=(
	drivers/net:ping.py
	drivers/net:queues.py
	drivers/net:stats.py
	drivers/net/hw:csum.py
	drivers/net/hw:devlink_port_split.py
	drivers/net/hw:ethtool_mm.sh
	drivers/net/hw:loopback.sh
)

cleanup() {
	ip netns pids "$RNS" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del "$RNS" 2>/dev/null
	[ -e "$GN_SYSFS/del_device" ] && gn_del_device "$DEV" 2>/dev/null
	[ -e "$GN_SYSFS/del_device" ] && gn_del_device "$SPLIT_DEV" 2>/dev/null
	return 0
}

setup() {
	local i
	[ -x "$KSFT/run_kselftest.sh" ] || { echo "no kselftests in $KSFT (make ksft-build)"; return 1; }
	gn_load || { echo "cannot load $GN_KO"; return 1; }
	gn_new_device "$DEV" 7 || return 1
	ip netns add "$RNS" && ip -n "$RNS" link set lo up || return 1
	ip link set "$RIF" netns "$RNS" || return 1
	gn_link init "$NETIF" "$RNS" "$RIF" || return 1
	gn_link init "gn${DEV}p2" init "gn${DEV}p3" || return 1
	gn_link init "gn${DEV}p4" init "gn${DEV}p5" || return 1
	# stats.py takes NETIF down and up: keep its IPv6 addresses (the
	# later tests need them), as a configured host would
	sysctl -qw "net.ipv6.conf.$NETIF.keep_addr_on_down=1" || return 1
	# devlink_port_split.py takes one devlink device whose ports are all
	# in this namespace (it cannot name a port that is in another one)
	gn_new_device "$SPLIT_DEV" 2 || return 1
	ip addr add "$LOCAL_V4/24" dev "$NETIF"
	ip addr add "$LOCAL_V6/64" dev "$NETIF" nodad
	ip -n "$RNS" addr add "$REMOTE_V4/24" dev "$RIF"
	ip -n "$RNS" addr add "$REMOTE_V6/64" dev "$RIF" nodad
	# four channels on NETIF: rss_ctx needs at least three queues
	ethtool -L "$NETIF" combined 4 || return 1
	ip link set "$NETIF" up
	ip -n "$RNS" link set "$RIF" up
	for i in 2 3 4 5; do ip link set "gn${DEV}p$i" up; done
	wait_carrier init "$NETIF" 1 && wait_carrier "$RNS" "$RIF" 1
}

trap cleanup EXIT
if ! out=$(setup 2>&1); then
	echo "TAP version 13"
	echo "not ok 1 drivers/net selftests: environment setup"
	printf '%s\n' "$out" | sed 's/^/# /'
	echo "1..1"
	exit 1
fi

export KSELFTEST_ETHTOOL_RMON_SH_ARGS="gn${DEV}p2 gn${DEV}p3"
export KSELFTEST_ETHTOOL_MM_SH_ARGS="gn${DEV}p4 gn${DEV}p5"
export KSELFTEST_LOOPBACK_SH_ARGS="gn${DEV}p2 gn${DEV}p3"
export KSELFTEST_ETHTOOL_EXTENDED_STATE_SH_ARGS="gn${DEV}p2 gn${DEV}p3"
export KSELFTEST_DEVLINK_PORT_SPLIT_PY_ARGS="--dev platform/gaudi_nic.$SPLIT_DEV"
# h1 swp1 swp2 h2: h1-swp1 and swp2-h2 are the two cabled pairs
export KSELFTEST_BRIDGE_VLAN_AWARE_SH_ARGS="gn${DEV}p2 gn${DEV}p3 gn${DEV}p4 gn${DEV}p5"
# h1 rp1 rp2 h2: the same pairs, the router between them
export KSELFTEST_ROUTER_SH_ARGS="gn${DEV}p2 gn${DEV}p3 gn${DEV}p4 gn${DEV}p5"
# results as they come, so a test the runner times out still shows them
export PYTHONUNBUFFERED=1

# run COLLECTION TEST...: kselftest's runner, as run_kselftest.sh calls it,
# with its log on our stdout: the runner writes each test's output to
# $logfile (/dev/stdout), which virtme-ng points at the guest console.
# The runner's per-test timeout (45 s by default) is for native speed;
# under TCG the Python tests take minutes; the list's timeout bounds us.
run() {
	(
		# the runner reads unset KSELFTEST_<TEST>_ARGS
		set +u
		cd "$KSFT" || exit 1
		BASE_DIR=$KSFT
		. ./kselftest/runner.sh
		logfile=/proc/self/fd/1
		kselftest_override_timeout=${KSFT_TIMEOUT:-300}
		cd "$1" || exit 1
		[ -w /dev/kmsg ] && echo "kselftest: Running tests in $1" >/dev/kmsg
		shift
		run_many "$@"
	)
}
# the runner's output, visible from the host while the guest runs
raw=${KSFT_RAW:-/build/results/ksft-drivers-net.raw}
: >"$raw"
for c in drivers/net drivers/net/hw; do
	tests=()
	for t in "${RUN[@]}"; do [ "${t%%:*}" = "$c" ] && tests+=("${t#*:}"); done
	run "$c" "${tests[@]}" >>"$raw" 2>&1
done
# The slowest tests run in `make ksft` (KSFT_FULL=1); make check, which
# has to stay within 30 minutes, reports them as not run, with the reason:
# - rss_ctx.py: eight rounds of iperf3 traffic, each waiting for the rate
#   to settle (76 s under TCG);
# - ethtool_rmon.sh: 30000 frames per RMON bucket, 28 buckets-directions
#   (about 200 s under TCG; measured 2026-11-24).  tests/net/tools.sh
#   checks the same counters bucket by bucket with 100 frames each;
# - net/forwarding/bridge_vlan_aware.sh: 73 s under TCG.
if [ "${KSFT_FULL:-0}" = 1 ]; then
	# (ethtool_rmon.sh ran past the runner's 300 s on a loaded host,
	# 2026-11-24: 22 of its 28 buckets done)
	KSFT_TIMEOUT=600 run drivers/net/hw ethtool_rmon.sh >>"$raw" 2>&1
	KSFT_TIMEOUT=600 run drivers/net/hw rss_ctx.py >>"$raw" 2>&1
else
	NOT_RUN+=("drivers/net/hw/rss_ctx.py=runs in make ksft only: its iperf3 rounds take over a minute under TCG, beyond make check's time budget")
	NOT_RUN+=("net/forwarding/bridge_vlan_aware.sh=runs in make ksft only: 73 s under TCG (11 cases: a VLAN-aware bridge over two cabled pairs, other-TPID reception), beyond make check's time budget")
	NOT_RUN+=("drivers/net/hw/ethtool_rmon.sh=runs in make ksft only: its 840000 frames take about 200 s under TCG, beyond make check's time budget; tests/net/tools.sh checks every RMON bucket in both directions with 100 frames")
fi
# ethtool_extended_state.sh: only its no_cable case applies (NOT_RUN)
TESTS=no_cable run drivers/net/hw ethtool_extended_state.sh >>"$raw" 2>&1
# net/netdevice.sh exercises every eth* or enp* interface it finds: the
# cable-less port, named eth0 for it (the guest has no other such name):
# up, MAC address while up, every feature off and on, ethtool -S, down
if ip link set "$NETIF_NO_CABLE" down && ip link set "$NETIF_NO_CABLE" name eth0; then
	run net netdevice.sh >>"$raw" 2>&1
else
	echo "not ok 1 selftests: net: netdevice.sh # cannot name $NETIF_NO_CABLE eth0" >>"$raw"
fi
ip link set eth0 down 2>/dev/null && ip link set eth0 name "$NETIF_NO_CABLE"
# last: the forwarding library leaves its ports down and in no VRF
# router.sh: IPv4 and IPv6 forwarding between two cabled pairs, and what a
# router must forward (class E source, multicast to a mismatched MAC
# through smcrouted, source = destination, link-local destination)
run net/forwarding router.sh >>"$raw" 2>&1
[ "${KSFT_FULL:-0}" = 1 ] && run net/forwarding bridge_vlan_aware.sh >>"$raw" 2>&1
nr=()
for x in "${NOT_RUN[@]}"; do nr+=(--not-run "$x"); done
python3 "$here/ksft-report.py" "${nr[@]}" "$raw"
exit $?
