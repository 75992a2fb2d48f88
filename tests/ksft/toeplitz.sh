#!/usr/bin/env bash
# toeplitz.sh - the kernel's net/toeplitz checker over our cable: the RSS
# hash each received frame carries (skb->hash, from the MAC's RX
# descriptor) must be the Toeplitz hash of its addresses and ports under
# the key the driver programmed (the system's netdev_rss_key).
#
# Upstream's net/toeplitz.sh wraps the same binary but needs NIC loopback
# mode (setup_loopback.sh), which the MAC does not have; here the remote
# end of a cable sends, as toeplitz_client.sh does.  The RSS-queue and
# RPS checks (-C/-r) need per-queue IRQ CPUs: the emulated MAC's vectors
# are not Linux IRQs, so only the hash is checked.  Output: TAP.
here=$(cd "$(dirname "$0")" && pwd)
GN_DEV=${GN_DEV:-31}
. "$here/../net/lib.sh"
TZ=/build/ksft/net/toeplitz
KEY=$(cat /proc/sys/net/core/netdev_rss_key)
PORT=8000

# send PROTO(-t|-u) IPVER(-4|-6) ADDR: 40 flows from the remote side
send() {
	local i
	for ((i = 0; i < 40; i++)); do
		if [ "$1" = -u ]; then
			echo "msg $i" | rmt nc "$2" -u -w 0 "$3" "$PORT"
		else
			echo "msg $i" | rmt nc "$2" -w 0 "$3" "$PORT"
		fi 2>/dev/null
	done
}

trap env_cleanup EXIT
tap_env_start env_setup
for proto in -t -u; do
	for ipv in -4 -6; do
		addr=$LOCAL_V4
		[ "$ipv" = -6 ] && addr=$LOCAL_V6
		log=$(mktemp)
		# -T: the checker reads its rings once after this many ms
		lcl "$TZ" "$ipv" "$proto" -d "$PORT" -i "$NETIF" -k "$KEY" -T 8000 -s -v \
			>"$log" 2>&1 &
		pid=$!
		sleep 1
		send "$proto" "$ipv" "$addr"
		wait "$pid"
		rc=$?
		count=$(grep -m1 '^count:' "$log")
		if [ "$rc" = 0 ]; then
			t_ok "toeplitz $ipv $proto: rx hash = Toeplitz(key, tuple) ($count)"
		else
			t_fail "toeplitz $ipv $proto (exit $rc, $count)" "$(grep -v '^cpu' "$log" | tail -n 5)" \
				"$(grep -m3 '!=' "$log")"
		fi
		rm -f "$log"
	done
done
tap_done
