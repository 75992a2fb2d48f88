#!/bin/bash
# SPDX-License-Identifier: MIT
# In the guest: load gaudi_nic (2 devices), then HBM tensors in collectives.
. "$(dirname "$0")/../accel/lib.sh"
ensure_loaded || { echo "1..0 # SKIP gaudi_nic.ko did not load"; exit 0; }
exec python3 "$(dirname "$0")/hbm_vm.py"
