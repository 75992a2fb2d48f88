#!/usr/bin/env bash
# kernel-style.sh - the kernel code's standing checks, as TAP:
# checkpatch.pl (strict) on every kernel source file, then a sparse build
# (C=2) of all modules that must print no warning.  Runs in the test root.
set -u
cd /src
cp=/opt/checkpatch/scripts/checkpatch.pl
mapfile -t files < <(git ls-files -co --exclude-standard -- \
	'drivers/*.[ch]' 'include/*.h' 'tests/kmod/*.[ch]' 2>/dev/null ||
	find drivers include tests/kmod -name '*.[ch]')
echo "TAP version 13"
echo "1..$(( ${#files[@]} + 1 ))"
n=0 bad=0
for f in "${files[@]}"; do
	n=$((n + 1))
	out=$("$cp" --no-tree --strict --terse --show-types -f "$f" \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG 2>&1)
	if echo "$out" | grep -qE ': (ERROR|WARNING|CHECK):'; then
		echo "not ok $n - checkpatch $f"
		echo "$out" | grep -E ': (ERROR|WARNING|CHECK):' | head -n 20 | sed 's/^/# /'
		bad=1
	else
		echo "ok $n - checkpatch $f"
	fi
done
n=$((n + 1))
log=$(mktemp)
if make --no-print-directory -C /src sparse >"$log" 2>&1; then
	echo "ok $n - sparse (C=2) prints no warning"
else
	echo "not ok $n - sparse (C=2) prints no warning"
	grep -E 'warning|error' "$log" | head -n 30 | sed 's/^/# /'
	bad=1
fi
rm -f "$log"
exit $bad
