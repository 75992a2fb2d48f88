#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the i386 uAPI client (static, no libdrm) and run it in the VM.
. "$(dirname "$0")/lib.sh"
ensure_loaded || { echo "not ok 1 - load"; exit 1; }
gcc -m32 -static -O2 -Wall -Werror -I/src/include/uapi \
	-o /tmp/gn_compat32 /src/tests/accel/compat32.c || { echo "not ok 1 - build the i386 client"; exit 1; }
exec /tmp/gn_compat32 /dev/accel/accel0
