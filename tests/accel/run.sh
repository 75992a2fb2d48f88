#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run.sh ARGS... - load the modules if needed, then run gn-accel-test ARGS.
. "$(dirname "$0")/lib.sh"
if ! ensure_loaded; then
	echo "not ok 1 - loading gaudi_nic.ko, gaudi_nic_sim.ko and the test importer"
	exit 1
fi
exec $TEST_BIN/gn-accel-test "$@"
