#!/usr/bin/env bash
# tsan.sh [OUTDIR] - threads_test under ThreadSanitizer (issue 16: libgcoll
# from worker threads).  Builds the library's sources with the test into
# one -fsanitize=thread binary (libfabric itself is not instrumented: races
# inside it are not seen, races between gcoll's own threads and state are),
# runs it over tcp and shm with 2 ranks, and fails on any TSan report even
# when every check passed.  TAP.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-/build/collectives-tsan}
mkdir -p "$out"
bin=$out/threads_test
cc=${CC:-cc}
if ! echo 'int main(void){return 0;}' | "$cc" -x c -fsanitize=thread -o "$out/probe" - 2>/dev/null; then
	echo "1..0 # SKIP $cc cannot build with -fsanitize=thread"
	exit 0
fi
# shellcheck disable=SC2046
if ! "$cc" -std=gnu11 -pthread -g -O1 -fsanitize=thread -Wall -Wextra -Werror -Wno-missing-field-initializers \
	-I"$src/include" -I"$src/src" $(pkg-config --cflags libfabric) \
	"$src"/src/*.c "$src/tests/threads_test.c" "$src/tests/tutil.c" \
	-o "$bin" $(pkg-config --libs libfabric) -lpthread -lm 2>"$out/cc.err"; then
	echo "not ok 1 - build threads_test with -fsanitize=thread"
	sed 's/^/# /' "$out/cc.err"
	echo "1..1"
	exit 1
fi
n=0 fail=0
for p in tcp shm; do
	n=$((n + 1))
	TSAN_OPTIONS="exitcode=66 halt_on_error=0" GCOLL_DEBUG=0 \
		timeout 600 "$bin" --provider "$p" --ranks 2 >"$out/$p.log" 2>&1
	rc=$?
	reports=$(grep -c 'WARNING: ThreadSanitizer' "$out/$p.log")
	checks=$(grep -c '^not ok' "$out/$p.log")
	if [ "$rc" = 0 ] && [ "$reports" = 0 ]; then
		echo "ok $n - threads_test --provider $p under TSan: no race reported, every check passed"
	else
		echo "not ok $n - threads_test --provider $p under TSan: exit $rc, $reports race reports, $checks failed checks"
		grep -A14 'WARNING: ThreadSanitizer\|^not ok' "$out/$p.log" | sed 's/(BuildId[^)]*)//; s/^/# /' | head -n 80
		fail=1
	fi
done
echo "1..$n"
exit $fail
