#!/bin/bash
# SPDX-License-Identifier: MIT
# In the guest: two gaudi_nic devices of our own (60 and 61, whatever else
# the run has created or removed before), then HBM tensors in collectives.
here=$(dirname "$0")
. "$here/../net/lib.sh"
DEVS="60 61"
gn_load || { echo "1..0 # SKIP gaudi_nic.ko did not load"; exit 0; }
for d in $DEVS; do
	gn_new_device "$d" 1 || { echo "not ok 1 - create gaudi_nic.$d"; exit 1; }
done
trap 'for d in $DEVS; do gn_del_device "$d"; done' EXIT
HBM_DEVS="$DEVS" python3 "$here/hbm_vm.py"
