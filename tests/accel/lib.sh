# SPDX-License-Identifier: GPL-2.0
# Helpers for the accel VM tests (sourced).
. "$(dirname "${BASH_SOURCE[0]}")/../lib/klog.sh"
KO=${GAUDI_NIC_KMOD:-/build/kmod}/drivers/accel/gaudi_nic/gaudi_nic.ko
# the emulated ASIC: creates the devices, owns the control files
SIM_KO=${GAUDI_NIC_KMOD:-/build/kmod}/drivers/accel/gaudi_nic/sim/gaudi_nic_sim.ko
SIMDRV=/sys/bus/platform/drivers/gaudi_nic_sim
IMP_KO=${GAUDI_NIC_KMOD:-/build/kmod}/tests/kmod/gaudi_nic_test_importer.ko
# hl-thunk's example and benchmark (hl-thunk/meson.build, release build)
BIN=/build/hl-thunk-rel
# gn-accel-test and gn-accel-fuzz (tests/accel/meson.build, release build)
TEST_BIN=/build/tests-accel-rel
MARK=/tmp/gaudi_nic_dmesg_mark

# KTAP through the kselftest library's helpers; "$n" is the number of
# points so far, for the plan line ("1..$n") the tests print at the end.
# shellcheck source=/dev/null
. "${KTAP_HELPERS:-/opt/linux-src/tools/testing/selftests/kselftest/ktap_helpers.sh}"
n=0
# ok DESC SHELL-CONDITION
ok() {
	local -
	n=$((n + 1))
	if eval "$2"; then set -f; ktap_test_pass "- $1"; else set -f; ktap_test_fail "- $1"; fi
}

# Load the modules once per boot (the driver, then the emulator with two
# devices, then the test importer); remember where the kernel log starts.
ensure_loaded() {
	[ -f $MARK ] || dmesg | wc -l > $MARK
	# insmod does not resolve dependencies (drm is a module)
	for dep in $(modinfo -F depends $KO | tr , ' '); do
		modprobe -q "$dep" || return 1
	done
	grep -q '^gaudi_nic ' /proc/modules || insmod $KO || return 1
	grep -q '^gaudi_nic_sim ' /proc/modules || insmod $SIM_KO num_devices=2 || return 1
	grep -q '^gaudi_nic_test_importer ' /proc/modules || insmod $IMP_KO || return 1
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
}

new_dmesg() { tail -n +$(( $(cat $MARK 2>/dev/null || echo 0) + 1 )) < <(dmesg); }
