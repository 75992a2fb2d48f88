#!/usr/bin/env bash
# vm.sh - boot the test root's kernel under virtme-ng (TCG, no KVM) and run
# work in the guest.  Runs inside the root (see inroot.sh); the guest sees
# the root as its filesystem, the checkout at /src and /build writable.
#
#   vm.sh LIST RESULTDIR    run the tests of LIST (file or directory, see
#                           run-tests.sh); the guest writes TAP, per-test
#                           logs and counts into RESULTDIR (under /build)
#   vm.sh --demo SCRIPT     run SCRIPT in the guest, output on the terminal
#
# GAUDI_NIC_VM_KVER boots another kernel of the root than its own
# (/boot/vmlinuz-RELEASE: the debug kernel), GAUDI_NIC_VM_ENV gives the
# guest's test runner environment variables ("NAME=VALUE ...").
# The guest console goes to RESULTDIR.console.log (demo: /build/demo.log).
# The exit status is the guest's own: run-tests.sh's (non-zero if a test
# failed), or 1 if the guest never finished.
# qemu runs in the PID namespace made by inroot.sh, so it cannot outlive us;
# on a timeout we also kill it here.
set -uo pipefail
kver=${GAUDI_NIC_VM_KVER:-${GAUDI_NIC_KVER:?run inside the test root}}
kernel=/boot/vmlinuz-$kver
mem=${GAUDI_NIC_VM_MEM:-3G}

# Tests keep the kernel's console in their log (for crashes); the demo
# shows only what it runs.  log_buf_len: tests mark the kernel log by its
# line count, which only works while the ring buffer (128 KiB in Debian's
# config) holds the whole boot; final-checks.sh checks that it did.
verbose=(--verbose)
vng_run() { # TIMEOUT GUEST_COMMAND
	timeout --kill-after=20 "$1" vng "${verbose[@]}" --run "$kernel" --disable-kvm --force-9p \
		--cpus "$(nproc)" --memory "$mem" --rwdir /build \
		--append "panic_on_warn=0 oops=panic log_buf_len=16M" \
		--exec "$2"
}

if [ "${1:-}" = --demo ]; then
	script=$2
	verbose=()
	vng_run 1800 "bash /src/$script" 2>&1 | tee /build/demo.log
	exit "${PIPESTATUS[0]}"
fi

list=$1 out=$2
case "$list" in /*) ;; *) list=/src/$list ;; esac
case "$out" in /build/*) ;; *) echo "vm.sh: RESULTDIR must be under /build (the guest writes there)" >&2; exit 2 ;; esac
console=$out.console.log
rm -rf "$out"; mkdir -p "$out"
if [ -d "$list" ]; then lists=("$list"/*.list); else lists=("$list"); fi
# Give the guest the sum of the tests' own timeouts plus time to boot, but
# never more than GAUDI_NIC_VM_LIMIT (default 40 min): a guest whose kernel
# deadlocks must not eat CI's whole 90 minutes.
limit=${GAUDI_NIC_VM_LIMIT:-2400}
total=$(cat "${lists[@]}" | awk -v max="$limit" '!/^[[:space:]]*(#|$)/ { t += $2 }
	END { t += 300; print (t > max ? max : t) }')
ntests=$(cat "${lists[@]}" | grep -cv '^[[:space:]]*\(#\|$\|wait[[:space:]]*$\)')
echo "# booting $kernel under TCG for $ntests VM tests (limit ${total}s)"
start=$(date +%s)
vng_run "$total" "env ${GAUDI_NIC_VM_ENV:-} /src/tools/testenv/run-tests.sh $list $out; echo \$? > $out/finished; dmesg > $out/dmesg.log" \
	</dev/null >"$console" 2>&1 &
vpid=$!
# Progress: each test's result line, as the guest prints it: only whole
# lines (the console may hold half of one), each test number once (the
# console can repeat a line, e.g. when the kernel's messages interleave).
pat='^(1\.\.[0-9]+|(not )?ok [0-9]+ [^- ])'
declare -A shown=()
progress() {
	local line key partial=
	# a last line without its newline yet is still being written
	[ -n "$(tail -c1 "$console" 2>/dev/null)" ] && partial=$(tail -n1 "$console")
	while IFS= read -r line; do
		[ -n "$partial" ] && [ "$line" = "$partial" ] && continue
		[[ $line =~ ^(not\ )?ok\ ([0-9]+) ]] && key=${BASH_REMATCH[2]} || key=$line
		[ -n "${shown[$key]:-}" ] && continue
		shown[$key]=1
		printf '%s\n' "$line"
	done < <(grep -a -E "$pat" "$console" 2>/dev/null)
}
while kill -0 "$vpid" 2>/dev/null; do
	sleep 2
	progress
done
wait "$vpid"
rc=$?
progress
# Then the whole output of every failed test (also in $out/NAME.log), and
# last, where a reader of only the tail sees it, each failed test's failed
# checks with the first lines that explain them (6 after each).
failed=$(grep -a -E '^not ok [0-9]+ ' "$console" | awk '{ print $4 }')
for name in $failed; do
	echo "# ---- output of failed test $name (build/results/${out#/build/results/}/$name.log):"
	head -n 200 "$out/$name.log" 2>/dev/null | sed 's/^/#   /'
done
for name in $failed; do
	echo "# ---- $name: its failed checks"
	grep -a -E -A6 '^[# ]*not ok ' "$out/$name.log" 2>/dev/null | head -n 24 | sed 's/^/#   /'
done
echo "# guest ran for $(( $(date +%s) - start ))s"
if [ ! -f "$out/finished" ]; then
	echo "not ok - the guest did not finish (vng exit $rc: crash, hang or timeout)"
	echo "# guest console log: ${console#/}; its last lines:"
	tail -n 40 "$console" | sed 's/^/#   /'
	exit 1
fi
exit "$(cat "$out/finished")"	# the guest's own status: 0 only if all passed
