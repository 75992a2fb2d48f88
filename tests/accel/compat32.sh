#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the i386 uAPI client (static, no libdrm; a kselftest, with the
# kernel's kselftest_harness.h from the root's linux-source) and run it in
# the VM.  Output: its KTAP.
. "$(dirname "$0")/lib.sh"
KSFT_INC=${KSFT_INC:-/opt/linux-src/tools/testing/selftests}
ensure_loaded || { echo "not ok 1 - load"; exit 1; }
gcc -m32 -static -O2 -Wall -Wextra -Werror -I/src/include/uapi -isystem "$KSFT_INC" \
	-o /tmp/gn_compat32 /src/tests/accel/compat32_test.c || { echo "not ok 1 - build the i386 client"; exit 1; }
exec /tmp/gn_compat32 /dev/accel/accel0
