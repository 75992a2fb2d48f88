#!/usr/bin/env bash
# boundary.sh - the seam between the driver (drivers/accel/gaudi_nic/*) and
# the emulated ASIC (drivers/accel/gaudi_nic/sim/*), checked, as TAP:
#  1. no driver file includes a sim/ header, no sim/ file includes a driver
#     header ("../x.h") or the driver core (<linux/gaudi_nic/core.h>): the
#     emulator knows only the hardware contracts;
#  2. no driver object references a symbol that a sim/ object defines (the
#     driver reaches the hardware through ops tables only), and no sim/
#     object references one that a driver object defines (no up-calls);
#  3. gaudi_nic.ko imports nothing from the emulator's module
#     (gaudi_nic_sim.ko) but the ops registration (SIM_REG_SYMS below);
#  4. every global symbol a sim/ object defines starts with gnsim_;
#  5. the RDMA driver (drivers/infiniband/hw/gaudi) includes no header of
#     another directory by path, and of the contract headers only
#     IB_HDRS; its objects reference no symbol of the emulator, and of
#     the driver core only exported ones (gaudi_nic_*);
#  6. a contract header (include/linux/gaudi_nic/ but core.h) includes no
#     quoted header and not the driver core (core.h).
# The crossings not removed yet are listed in boundary.allow; anything else
# fails, and so does an entry there that no longer crosses (the list only
# shrinks).  Needs the built objects (make kmod).
#
#   boundary.sh [--src DIR] [--build DIR] [--allow FILE]
#   boundary.sh --selftest    fixtures: a clean tree passes, each kind of
#                             crossing and a stale allow entry fail
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=/src build=/build/kmod allow=$here/boundary.allow
# What gaudi_nic.ko may import from gaudi_nic_sim.ko.
SIM_REG_SYMS=${SIM_REG_SYMS:-}
# The contract headers the RDMA driver may include.
IB_HDRS="roce_hw.h core.h"

# includes_of TOP FILE...: "FILE HEADER" for each #include of each FILE,
# FILE relative to TOP, HEADER as written with its quotes or brackets
includes_of() {
	local top=$1 f
	shift
	for f in "$@"; do
		[ -e "$f" ] || continue
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\([<"][^>"]*[>"]\).*/\1/p' "$f" |
			while read -r h; do echo "${f#"$top"/} $h"; done
	done
}

# check SRC BUILD ALLOW: print "# ..." diagnostics, exit 1 on a violation
check() {
	local s=$1 al=$3 drv=$1/drivers/accel/gaudi_nic
	local obj=$2/drivers/accel/gaudi_nic f h sym bad=0 found
	local ib=$1/drivers/infiniband/hw/gaudi ib_obj=$2/drivers/infiniband/hw/gaudi
	found=$(mktemp)
	# 1. includes ("include FILE HEADER", HEADER without its quotes)
	includes_of "$s" "$drv"/*.[ch] | while read -r f h; do
		case $h in \"sim/*\") h=${h#\"}; echo "include $f ${h%\"}" ;; esac
	done >> "$found"
	includes_of "$s" "$drv"/sim/*.[ch] | while read -r f h; do
		case $h in
		\"../*\") h=${h#\"}; echo "include $f ${h%\"}" ;;
		\<linux/gaudi_nic/core.h\>) echo "include $f linux/gaudi_nic/core.h" ;;
		esac
	done >> "$found"
	# 2. symbols between the objects
	local drv_o=() sim_o=()
	for f in "$obj"/*.o; do
		# gaudi_nic_sim.o here: left by a build before sim/ had its Kbuild
		case $f in */gaudi_nic.o|*/gaudi_nic_sim.o|*.mod.o) continue ;; esac
		[ -e "$f" ] && drv_o+=("$f")
	done
	for f in "$obj"/sim/*.o; do
		case $f in */gaudi_nic_sim.o|*.mod.o) continue ;; esac
		[ -e "$f" ] && sim_o+=("$f")
	done
	if [ ${#drv_o[@]} -eq 0 ] || [ ${#sim_o[@]} -eq 0 ]; then
		echo "# no objects under $obj: build the modules first (make kmod)"
		rm -f "$found"
		return 2
	fi
	defs() { nm --defined-only -g "$@" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u; }
	undefs() { nm -u "$@" 2>/dev/null | awk 'NF == 2 && $1 == "U" { print $2 }' | sort -u; }
	comm -12 <(undefs "${drv_o[@]}") <(defs "${sim_o[@]}") |
		sed 's/^/down /' >> "$found"
	comm -12 <(undefs "${sim_o[@]}") <(defs "${drv_o[@]}") |
		sed 's/^/up /' >> "$found"
	# 4. every global symbol of the emulator has its prefix, so a grep tells
	#    hardware from driver (module plumbing and sysfs attributes aside)
	defs "${sim_o[@]}" | grep -v '^gnsim_\|^__\|^init_module$\|^cleanup_module$\|^driver_attr_' |
		sed 's/^/prefix /' >> "$found"
	# 3. module imports (once the modules are linked)
	if [ -e "$obj/sim/gaudi_nic_sim.ko" ] && [ -e "$obj/gaudi_nic.ko" ]; then
		comm -12 <(undefs "$obj/gaudi_nic.ko") <(defs "$obj/sim/gaudi_nic_sim.ko") |
			while read -r sym; do
				[[ " $SIM_REG_SYMS " == *" $sym "* ]] || echo "import $sym"
			done >> "$found"
	fi
	# 5. the RDMA driver: includes and symbols
	includes_of "$s" "$ib"/*.[ch] | while read -r f h; do
		case $h in
		\"*/*\") echo "ib-include $f $h" ;;
		\<linux/gaudi_nic/*\>)
			h=${h#<linux/gaudi_nic/}
			[[ " $IB_HDRS " == *" ${h%>} "* ]] ||
				echo "ib-include $f <linux/gaudi_nic/$h" ;;
		esac
	done >> "$found"
	local ib_o=()
	for f in "$ib_obj"/*.o; do
		case $f in */gaudi_ib.o|*.mod.o) continue ;; esac
		[ -e "$f" ] && ib_o+=("$f")
	done
	if [ ${#ib_o[@]} -eq 0 ]; then
		echo "# no objects under $ib_obj: build the modules first (make kmod)"
		rm -f "$found"
		return 2
	fi
	comm -12 <(undefs "${ib_o[@]}") <(defs "${sim_o[@]}") |
		sed 's/^/ib-import /' >> "$found"
	comm -12 <(undefs "${ib_o[@]}") <(defs "${drv_o[@]}") | grep -v '^gaudi_nic_' |
		sed 's/^/ib-import /' >> "$found"
	# 6. the contract headers
	for f in "$s"/include/linux/gaudi_nic/*.h; do
		[ "${f##*/}" = core.h ] && continue
		includes_of "$s" "$f"
	done | while read -r f h; do
		case $h in
		\"*\"|\<linux/gaudi_nic/core.h\>) echo "contract-include $f $h" ;;
		esac
	done >> "$found"
	sort -u -o "$found" "$found"
	local allowed
	allowed=$(grep -v '^[[:space:]]*\(#\|$\)' "$al" 2>/dev/null | sort -u)
	while read -r f; do
		[ -n "$f" ] || continue
		if ! grep -qxF -- "$f" <<<"$allowed"; then
			echo "# crossing: $f"
			bad=1
		fi
	done < "$found"
	while read -r f; do
		[ -n "$f" ] || continue
		if ! grep -qxF -- "$f" "$found"; then
			echo "# stale entry in $(basename "$al"), no longer crosses: $f"
			bad=1
		fi
	done <<<"$allowed"
	echo "# $(wc -l < "$found") crossing(s), $(grep -c . <<<"$allowed") allowed"
	rm -f "$found"
	return $bad
}

selftest() {
	local t n=0 fail=0 rc
	t=$(mktemp -d)
	trap 'rm -rf "$t"' RETURN
	mkdir -p "$t/src/drivers/accel/gaudi_nic/sim" "$t/b/drivers/accel/gaudi_nic/sim" \
		"$t/src/drivers/infiniband/hw/gaudi" "$t/b/drivers/infiniband/hw/gaudi" \
		"$t/src/include/linux/gaudi_nic"
	local d=$t/src/drivers/accel/gaudi_nic o=$t/b/drivers/accel/gaudi_nic
	local id=$t/src/drivers/infiniband/hw/gaudi io=$t/b/drivers/infiniband/hw/gaudi
	local ch=$t/src/include/linux/gaudi_nic
	# the RDMA driver: its own header, a contract header, an exported call
	printf '#include "gib.h"\n#include <linux/gaudi_nic/roce_hw.h>\nextern int gaudi_nic_x(void);\nint gib(void) { return gaudi_nic_x(); }\n' > "$id/gib.c"
	printf 'int gaudi_nic_x(void) { return 0; }\n' > "$d/exp.c"
	: > "$id/gib.h"
	: > "$ch/roce_hw.h"
	: > "$ch/core.h"
	gcc -c -o "$io/gib.o" -I"$t/src/include" "$id/gib.c" &&
		gcc -c -o "$o/exp.o" "$d/exp.c" ||
		{ echo "not ok 1 - fixtures build"; return 1; }
	# a clean pair: the driver calls through an ops pointer it is handed
	printf 'struct ops { int (*f)(void); };\nint drv(const struct ops *o) { return o->f(); }\n' > "$d/drv.c"
	printf 'static int hw(void) { return 1; }\nint (*const gnsim_f)(void) = hw;\n' > "$d/sim/hw.c"
	build() { gcc -c -o "$o/drv.o" "$d/drv.c" && gcc -c -o "$o/sim/hw.o" "$d/sim/hw.c"; }
	expect() { # DESC WANT_RC
		n=$((n + 1))
		check "$t/src" "$t/b" "$t/allow" > "$t/out" 2>&1
		rc=$?
		if [ "$rc" = "$2" ]; then
			echo "ok $n - $1"
		else
			echo "not ok $n - $1 (rc $rc, want $2)"
			sed 's/^/# /' "$t/out"
			fail=1
		fi
	}
	: > "$t/allow"
	build || { echo "not ok 1 - fixtures build"; return 1; }
	expect "a clean tree passes" 0
	echo "down gnsim_f" > "$t/allow"
	expect "a stale allow entry fails" 1
	: > "$t/allow"
	printf '#include "sim/hw.h"\n' >> "$d/drv.c"
	: > "$d/sim/hw.h"
	expect "a driver file including a sim/ header fails" 1
	echo "include drivers/accel/gaudi_nic/drv.c sim/hw.h" > "$t/allow"
	expect "... unless allowed" 0
	printf 'int drv(void);\nint drv(void) { return 0; }\n' > "$d/drv.c"
	printf 'extern int gnsim_g(void);\nint drv2(void) { return gnsim_g(); }\n' > "$d/drv2.c"
	printf 'int gnsim_g(void) { return 2; }\n' > "$d/sim/hw.c"
	gcc -c -o "$o/drv.o" "$d/drv.c" && gcc -c -o "$o/drv2.o" "$d/drv2.c" &&
		gcc -c -o "$o/sim/hw.o" "$d/sim/hw.c"
	: > "$t/allow"
	expect "a driver object calling an emulator function fails" 1
	rm -f "$d/drv2.c" "$o/drv2.o"
	printf '#include "../eth.h"\nextern int drv(void);\nint gnsim_g(void) { return drv(); }\n' > "$d/sim/hw.c"
	: > "$d/eth.h"
	gcc -c -I"$d/sim" -o "$o/sim/hw.o" "$d/sim/hw.c"
	expect "an emulator up-call and include fail" 1
	printf 'up drv\ninclude drivers/accel/gaudi_nic/sim/hw.c ../eth.h\n' > "$t/allow"
	expect "... unless allowed" 0
	printf '#include <linux/gaudi_nic/core.h>\n' > "$d/sim/hw3.h"
	expect "an emulator file including the driver core fails" 1
	rm -f "$d/sim/hw3.h"
	printf 'int hw_unprefixed(void) { return 3; }\n' > "$d/sim/hw2.c"
	gcc -c -o "$o/sim/hw2.o" "$d/sim/hw2.c"
	expect "an emulator symbol without the gnsim_ prefix fails" 1
	# the emulator clean again, for the RDMA driver's cases
	rm -f "$d/sim/hw2.c" "$o/sim/hw2.o"
	printf 'int gnsim_g(void) { return 2; }\n' > "$d/sim/hw.c"
	gcc -c -o "$o/sim/hw.o" "$d/sim/hw.c"
	: > "$t/allow"
	expect "the RDMA driver's own header, roce_hw.h and an exported call pass" 0
	printf '#include "../../../accel/gaudi_nic/eth.h"\n' >> "$id/gib.c"
	expect "an RDMA driver file including a driver header by path fails" 1
	sed -i '$d' "$id/gib.c"
	printf '#include <linux/gaudi_nic/hw.h>\n' >> "$id/gib.c"
	expect "an RDMA driver file including a contract header not its own fails" 1
	sed -i '$d' "$id/gib.c"
	printf 'extern int gnsim_g(void);\nint gib2(void) { return gnsim_g(); }\n' > "$id/gib2.c"
	gcc -c -o "$io/gib2.o" "$id/gib2.c"
	expect "an RDMA driver object calling an emulator function fails" 1
	printf 'extern int drv(void);\nint gib2(void) { return drv(); }\n' > "$id/gib2.c"
	gcc -c -o "$io/gib2.o" "$id/gib2.c"
	expect "an RDMA driver object calling an unexported driver function fails" 1
	rm -f "$id/gib2.c" "$io/gib2.o"
	printf '#include <linux/gaudi_nic/core.h>\n' > "$ch/hw.h"
	expect "a contract header including the driver core fails" 1
	printf 'contract-include include/linux/gaudi_nic/hw.h <linux/gaudi_nic/core.h>\n' > "$t/allow"
	expect "... unless allowed" 0
	printf '#include "../../../drivers/accel/gaudi_nic/eth.h"\n' > "$ch/hw.h"
	expect "a contract header including a header by path fails" 1
	rm -f "$ch/hw.h"
	rm -f "$io"/*.o
	expect "no RDMA driver objects: an error, not a pass" 2
	rm -f "$o"/*.o "$o"/sim/*.o
	expect "no objects: an error, not a pass" 2
	echo "1..$n"
	return $fail
}

while [ $# -gt 0 ]; do
	case $1 in
	--selftest) selftest; exit ;;
	--src) src=$2; shift ;;
	--build) build=$2; shift ;;
	--allow) allow=$2; shift ;;
	*) echo "usage: $0 [--selftest] [--src DIR] [--build DIR] [--allow FILE]" >&2; exit 2 ;;
	esac
	shift
done
echo "TAP version 13"
echo "1..1"
check "$src" "$build" "$allow"
rc=$?
if [ $rc -eq 0 ]; then
	echo "ok 1 - driver/emulator/RDMA driver boundaries: only the allowed crossings"
else
	echo "not ok 1 - driver/emulator/RDMA driver boundaries: only the allowed crossings"
fi
exit $rc
