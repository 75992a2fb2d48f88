#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Final test: unload of either module while a dma-buf outlives its accel fd
# (refused), then
# unload the emulator under the bound driver, then the driver; reload the
# other way round (emulator first) and unload the driver first; the kernel
# log of the whole run must be free of warnings.
. "$(dirname "$0")/lib.sh"
ensure_loaded
ok "rmmod gaudi_nic_test_importer" "rmmod gaudi_nic_test_importer"
coproc HOLD { exec $TEST_BIN/gn-accel-test hold 30; }
read -r -t 60 line <&"${HOLD[0]}"
ok "a process holds a dma-buf after closing its accel fd" "[ \"$line\" = ready ]"
ok "rmmod gaudi_nic is refused while the dma-buf lives" "! rmmod gaudi_nic 2>/dev/null"
ok "rmmod gaudi_nic_sim is refused while the dma-buf lives" "! rmmod gaudi_nic_sim 2>/dev/null && [ -e /sys/bus/platform/devices/gaudi_nic.0 ]"
ok "the exported memory is still accounted" "[ \"\$(cat /sys/bus/platform/devices/gaudi_nic.0/gaudi_nic/mem_exports)\" = 1 ]"
kill "$HOLD_PID"; wait "$HOLD_PID" 2>/dev/null
ok "rmmod gaudi_nic_sim while gaudi_nic is bound: the devices unbind and go" "rmmod gaudi_nic_sim && ! ls /sys/bus/platform/devices | grep -q '^gaudi_nic'"
ok "no accel node left" "[ -z \"\$(ls /dev/accel 2>/dev/null)\" ]"
ok "rmmod gaudi_nic once the dma-buf is released" "rmmod gaudi_nic"
ok "reload the other way round: gaudi_nic_sim num_devices=3, then gaudi_nic" "insmod $SIM_KO num_devices=3 && insmod $KO && [ -c /dev/accel/accel2 ]"
ok "rmmod gaudi_nic first: the devices stay, unbound" "rmmod gaudi_nic && [ -e /sys/bus/platform/devices/gaudi_nic.2 ] && [ ! -e /dev/accel/accel0 ]"
ok "then rmmod gaudi_nic_sim" "rmmod gaudi_nic_sim && ! ls /sys/bus/platform/devices | grep -q '^gaudi_nic'"
bad=$(new_dmesg | grep -E "$KLOG_TROUBLE|WARNING|BUG|refcount|leak" | head -20)
ok "kernel log free of WARNING/BUG/Oops/refcount/leak ($(new_dmesg | wc -l) lines checked)" "[ -z \"\$bad\" ]"
[ -z "$bad" ] || echo "$bad" | sed 's/^/# /'
echo "1..$n"
