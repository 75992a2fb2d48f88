#!/usr/bin/env bash
# libfabric.sh - libfabric 2.1's verbs provider on the device (issue 14):
# fi_info -p verbs lists it for FI_EP_MSG, and for FI_EP_RDM through
# ofi_rxm; fi_pingpong -p "verbs;ofi_rxm" -e rdm and -p verbs -e msg at
# every size (-S all, data checked with -c) between gaudi_$DEV_A in $NS_A
# and gaudi_$DEV_B in $NS_B over a cable, one IPv6 round of each; then
# fi_dmabuf (tests/rdma/fi_dmabuf_test.c): an fi_writedata larger than the
# inject size from HBM of one device into an HBM dma-buf export of the
# other registered with fi_mr_regattr(FI_MR_DMABUF), checked through the
# accelerator's CPU mapping and the remote CQ data - the collectives' path.
# The verbs provider lists a RoCE device only on the interface named by
# FI_VERBS_IFACE (or with -a FI_SOCKADDR_IN; ofiwg/libfabric#11091).
# RCM_DEV=rxe: the same in loopback on rdma_rxe (fi_dmabuf with host
# memory: rxe cannot import dma-bufs).  Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-54}
DEV_B=${DEV_B:-55}
. "$here/rcm_lib.sh"
bin=${FI_DMABUF:-/build/tests-rdma/fi_dmabuf_test}
# fi_pingpong -I: iterations per size (its default is 10)
PP_ITERS=${PP_ITERS:-10}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

# ofi_rxm sizes its core CQ for FI_UNIVERSE_SIZE peers (libfabric 2.1's
# default: 1024): (128 + 128) x 1024 = 262144 entries, more than rxe's
# max_cqe (32767): there fi_enable fails with EINVAL ("Unable to create
# verbs CQ"); 64 peers ask for 16384
[ "$RCM_DEV" = rxe ] && export FI_UNIVERSE_SIZE=${FI_UNIVERSE_SIZE:-64}
trap rcm_cleanup EXIT
tap_env_start rcm_setup
if [ "$CABLE" = 1 ]; then
	t_ok "environment: $IB_A ($IF_A in $NS_A, $IP_A) cabled to $IB_B ($IF_B in $NS_B, $IP_B)"
	SNS=$NS_A CNS=$NS_B SIF=$IF_A CIF=$IF_B SIB=$IB_A CIB=$IB_B CIP=$IP_B
else
	t_ok "environment: $IB_A on $IF_A ($IP_A), loopback"
	SNS=$NS_A CNS=$NS_A SIF=$IF_A CIF=$IF_A SIB=$IB_A CIB=$IB_A CIP=$IP_A
fi

# fi_lists OUT DOMAIN TYPE: fi_info's output lists DOMAIN for TYPE
fi_lists() {
	awk -v d="$2" -v t="$3" '
		/^provider:/ { dom = ""; typ = "" }
		$1 == "domain:" { dom = $2 }
		$1 == "type:" { typ = $2; if (dom == d && typ == t) found = 1 }
		END { exit !found }' <<<"$1"
}
fi_check() { # DESC NS IF DOMAIN TYPE ARGS...
	local desc=$1 ns=$2 ifc=$3 dom=$4 type=$5 out
	shift 5
	out=$(in_ns "$ns" env ${ifc:+FI_VERBS_IFACE=$ifc} timeout 60 fi_info "$@" 2>&1)
	if fi_lists "$out" "$dom" "$type"; then
		t_ok "$desc"
	else
		t_fail "$desc" "fi_info $*:" "$out"
	fi
}
fi_check "fi_info -p verbs lists $SIB for FI_EP_MSG (FI_VERBS_IFACE=$SIF)" \
	"$SNS" "$SIF" "$SIB" FI_EP_MSG -p verbs -t FI_EP_MSG
fi_check "fi_info -p 'verbs;ofi_rxm' lists $SIB for FI_EP_RDM (FI_VERBS_IFACE=$SIF)" \
	"$SNS" "$SIF" "$SIB" FI_EP_RDM -p "verbs;ofi_rxm" -t FI_EP_RDM
fi_check "fi_info -p verbs -a FI_SOCKADDR_IN lists $SIB for FI_EP_MSG" \
	"$SNS" "" "$SIB" FI_EP_MSG -p verbs -t FI_EP_MSG -a FI_SOCKADDR_IN
if [ "$CABLE" = 1 ]; then
	fi_check "fi_info -p 'verbs;ofi_rxm' lists $CIB for FI_EP_RDM in $CNS" \
		"$CNS" "$CIF" "$CIB" FI_EP_RDM -p "verbs;ofi_rxm" -t FI_EP_RDM
fi
diag "$(in_ns "$SNS" env FI_VERBS_IFACE="$SIF" fi_info -p "verbs;ofi_rxm" -t FI_EP_RDM -v 2>&1 |
	grep -E '^\s+(inject_size|max_msg_size|cq_data_size|mr_mode|iov_limit|rma_iov_limit):' | sort -u | tr -s ' \n' ' ')"

# fi_pp DESC PROV EP SIZES [FAM]: fi_pingpong server on the A side, client on
# the B side (or both on A), data integrity checked (-c)
fi_pp() {
	local desc=$1 p=$2 ep=$3 sz=$4 fam=${5:-4} srv=$IP_A sx=(-s "$IP_A") cx=()
	# -6 with -s ADDR6 finds no fabric (fi_getinfo -61); -6 alone with
	# FI_VERBS_IFACE does
	[ "$fam" = 6 ] && srv=$IP6_A sx=(-6) cx=(-6)
	cm_pair "$desc" 300 tcp:47592 "$SNS" "$CNS" \
		env FI_VERBS_IFACE="$SIF" fi_pingpong -p "$p" -e "$ep" -S "$sz" -I "$PP_ITERS" -c "${sx[@]}" -- \
		env FI_VERBS_IFACE="$CIF" fi_pingpong -p "$p" -e "$ep" -S "$sz" -I "$PP_ITERS" -c "${cx[@]}" "$srv"
	FI_PP_OUT=$CM_OUT_C
	local n
	n=$(grep -cE '^[0-9]+(\.[0-9]+)?[kmg]? +[0-9]+' <<<"$CM_OUT_C")
	diag "$desc: $n sizes, largest: $(grep -E '^[0-9]' <<<"$CM_OUT_C" | tail -n 1 | tr -s ' ')"
}
# libfabric's defaults: ofi_rxm's core (MSG) CQ holds (128 + 128) x
# FI_UNIVERSE_SIZE (1024) = 262144 entries, gaudi's max_cqe.  Before the
# engine took CQs of 2^18 entries fi_enable failed here with EINVAL
# ("Unable to create verbs CQ"), issue 14.
diag "max_cqe of $SIB: $(ibv_devinfo -v -d "$SIB" 2>/dev/null | awk '$1 == "max_cqe:" { print $2 }')"
fi_pp "fi_pingpong -p 'verbs;ofi_rxm' -e rdm -S all -c" "verbs;ofi_rxm" rdm all
grep -q '^bytes' <<<"$FI_PP_OUT" || diag "$FI_PP_OUT"
fi_pp "fi_pingpong -p verbs -e msg -S all -c" verbs msg all
grep -q '^bytes' <<<"$FI_PP_OUT" || diag "$FI_PP_OUT"
fi_pp "fi_pingpong -p 'verbs;ofi_rxm' -e rdm -S 65536 -c, IPv6" "verbs;ofi_rxm" rdm 65536 6
fi_pp "fi_pingpong -p verbs -e msg -S 65536 -c, IPv6" verbs msg 65536 6

# fi_dmabuf: HBM dma-buf export as the target of an fi_writedata
need_test_bin fi_dmabuf_test "$bin"
# fi_dm DESC ARGS...: server on the A side, client on the B side; each
# side is a kselftest of one test (fi_dmabuf.server, fi_dmabuf.client),
# whose KTAP becomes our points
fi_dm() {
	local desc=$1 sargs=() cargs=()
	shift
	if [ "$RCM_DEV" = rxe ]; then
		sargs=(-H) cargs=(-H)
	else
		sargs=(-a "$DEV_A") cargs=(-a "$DEV_B")
	fi
	cm_pair "fi_dmabuf $desc" 180 tcp:47600 "$SNS" "$CNS" \
		env FI_VERBS_IFACE="$SIF" "$bin" server -d "$SIB" -s "$IP_A" "${sargs[@]}" "$@" -- \
		env FI_VERBS_IFACE="$CIF" "$bin" client -d "$CIB" "${cargs[@]}" "$@" "$IP_A"
	ksft_relay "fi_dmabuf server" ", $desc" <<<"$CM_OUT_S"
	ksft_relay "fi_dmabuf client" ", $desc" <<<"$CM_OUT_C"
}
if [ "$RCM_DEV" = rxe ]; then
	diag "rxe cannot import dma-bufs: fi_dmabuf runs on host memory here"
fi
fi_dm "verbs;ofi_rxm, 1 MiB" -n 1048576
fi_dm "verbs;ofi_rxm, 65537 B" -n 65537
tap_done
