#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Module load, device probing, /dev/accel nodes and sysfs interface.
. "$(dirname "$0")/lib.sh"
ok "insmod gaudi_nic.ko, gaudi_nic_sim.ko num_devices=2 and the test importer" ensure_loaded
ok "two gaudi_nic platform devices" "[ -e /sys/bus/platform/devices/gaudi_nic.0 ] && [ -e /sys/bus/platform/devices/gaudi_nic.1 ]"
ok "/dev/accel/accel0 and accel1 exist" "[ -c /dev/accel/accel0 ] && [ -c /dev/accel/accel1 ]"
ok "accel0 belongs to gaudi_nic.0" "[ \"\$(basename \$(readlink /sys/class/accel/accel0/device))\" = gaudi_nic.0 ]"
ok "new_device / del_device control files" "[ -w $SIMDRV/new_device ] && [ -w $SIMDRV/del_device ]"
ok "64-bit DMA mask on the platform device" "dmesg | grep -q 'gaudi_nic gaudi_nic.0: GNSIM0000'"
ok "per-device statistics in sysfs" "[ \"\$(cat /sys/bus/platform/devices/gaudi_nic.0/gaudi_nic/hbm_size)\" = 67108864 ] && [ \"\$(cat /sys/bus/platform/devices/gaudi_nic.0/gaudi_nic/hbm_used)\" = 0 ]"
ok "bus windows differ per device" "[ \"\$(cat /sys/bus/platform/devices/gaudi_nic.0/gaudi_nic/bus_base)\" != \"\$(cat /sys/bus/platform/devices/gaudi_nic.1/gaudi_nic/bus_base)\" ]"
echo 5 2 8 > $SIMDRV/new_device
ok "new_device \"5 2 8\" creates gaudi_nic.5 with 8 MiB" "[ \"\$(cat /sys/bus/platform/devices/gaudi_nic.5/gaudi_nic/hbm_size)\" = 8388608 ]"
ok "... and a third accel node" "ls /dev/accel | grep -c accel | grep -qx 3"
echo 5 > $SIMDRV/del_device
ok "del_device 5 removes it" "[ ! -e /sys/bus/platform/devices/gaudi_nic.5 ] && [ \"\$(ls /dev/accel | wc -l)\" = 2 ]"
ok "hl-thunk example runs" "LD_LIBRARY_PATH=$BIN $BIN/hlthunk-example gaudi_nic.1 >&2"
echo "1..$n"
