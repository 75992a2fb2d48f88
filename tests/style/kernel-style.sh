#!/usr/bin/env bash
# kernel-style.sh - the kernel code's standing checks, as KTAP (through
# the kselftest library's ktap_helpers.sh):
# checkpatch.pl (strict) on every kernel source file, then a sparse build
# (C=2) of all modules that must print no warning.  Runs in the test root.
set -u
cd /src
cp=/opt/checkpatch/scripts/checkpatch.pl
mapfile -t files < <(git ls-files -co --exclude-standard -- \
	'drivers/*.[ch]' 'include/*.h' 'tests/kmod/*.[ch]' 2>/dev/null ||
	find drivers include tests/kmod -name '*.[ch]')
# With --no-tree checkpatch cannot see the kernel's headers, so it reports
# CamelCase identifiers the kernel itself defines (the IEEE 802.3 names of
# struct ethtool_eth_mac_stats, ...).  Drop a CAMELCASE report only when the
# identifier it names is declared in the root's kernel headers; our own
# CamelCase is still reported.
kinc=()
for d in "/lib/modules/${GAUDI_NIC_KVER:-$(uname -r)}/build/include" \
	 /usr/src/linux-headers-*-common/include; do
	[ -d "$d" ] && kinc+=("$d")
done
kernel_ident() { [ ${#kinc[@]} -gt 0 ] && grep -rqw -- "$1" "${kinc[@]}"; }
drop_kernel_camelcase() {
	local line id
	while IFS= read -r line; do
		if [[ $line =~ :\ CHECK:CAMELCASE:\ Avoid\ CamelCase:\ \<([A-Za-z0-9_]+)\> ]]; then
			id=${BASH_REMATCH[1]}
			kernel_ident "$id" && continue
		fi
		printf '%s\n' "$line"
	done
}
# checkpatch leaves a CamelCase cache file in the current directory.
trap 'rm -f /src/.checkpatch-camelcase.*' EXIT
# shellcheck source=/dev/null
. "${KTAP_HELPERS:-/opt/linux-src/tools/testing/selftests/kselftest/ktap_helpers.sh}"
set -f	# the helpers echo unquoted
ktap_print_header
ktap_set_plan $(( ${#files[@]} + 1 ))
bad=0
for f in "${files[@]}"; do
	out=$("$cp" --no-tree --strict --terse --show-types -f "$f" \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG 2>&1 | drop_kernel_camelcase)
	if echo "$out" | grep -qE ': (ERROR|WARNING|CHECK):'; then
		ktap_test_fail "- checkpatch $f"
		echo "$out" | grep -E ': (ERROR|WARNING|CHECK):' | head -n 20 | sed 's/^/# /'
		bad=1
	else
		ktap_test_pass "- checkpatch $f"
	fi
done
log=$(mktemp)
if make --no-print-directory -C /src sparse >"$log" 2>&1; then
	ktap_test_pass "- sparse (C=2) prints no warning"
else
	ktap_test_fail "- sparse (C=2) prints no warning"
	grep -E 'warning|error' "$log" | head -n 30 | sed 's/^/# /'
	bad=1
fi
rm -f "$log"
ktap_print_totals
exit $bad
