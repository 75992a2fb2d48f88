#!/usr/bin/env bash
# final-checks.sh - runs last in the guest, after every other VM test.
# Unloads our modules in dependency order (each unload must succeed: a
# module that cannot be unloaded is holding a reference it should not) and
# then checks that the kernel log of the whole boot holds no warning, oops or
# memory-safety report.  Output: TAP.
set -u
mods=(gaudi_nic_test_delay gaudi_nic_test_importer gaudi_ib gaudi_nic)
n=0
echo "TAP version 13"
echo "1..$(( ${#mods[@]} + 1 ))"
for m in "${mods[@]}"; do
	n=$((n + 1))
	if ! grep -q "^$m " /proc/modules; then
		echo "ok $n - unload $m # SKIP not loaded at the end of the run"
	elif err=$(rmmod "$m" 2>&1); then
		echo "ok $n - unload $m"
	else
		echo "not ok $n - unload $m: $err"
		lsmod | sed 's/^/# /'
	fi
done
n=$((n + 1))
pat='WARNING:|BUG:|Oops|general protection|KASAN|UBSAN|refcount_t:|list_add corruption|list_del corruption|kmemleak|Call Trace|unreferenced object|page allocation failure'
if bad=$(dmesg | grep -E "$pat"); then
	echo "not ok $n - kernel log is clean"
	echo "$bad" | head -n 20 | sed 's/^/# /'
	echo "# context:"
	dmesg | grep -E -B5 -A25 "$pat" | head -n 80 | sed 's/^/#   /'
else
	echo "ok $n - kernel log is clean ($(dmesg | wc -l) lines checked)"
fi
