#!/bin/sh
# mpi_netns.sh CMD [ARG...] - run one Open MPI rank in the network namespace
# named by $MPI_NETNS_<rank>, with the environment $MPI_ENV_<rank> adds
# (the rank from OMPI_COMM_WORLD_RANK or
# PMIX_RANK): a single app context ("mpirun -np 2 mpi_netns.sh prog")
# spreads its ranks over namespaces, as the MPMD form
# ("-np 1 A : -np 1 B") would, which segfaults in trixie's mpirun 5.0.7.
# The rank keeps talking to its local PRRTE daemon through PMIx's unix
# socket in /tmp, which does not depend on the network namespace.
r=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-}}
[ -n "$r" ] || { echo "mpi_netns.sh: no OMPI_COMM_WORLD_RANK/PMIX_RANK: run me under mpirun" >&2; exit 2; }
eval "ns=\${MPI_NETNS_$r-unset}"
[ "$ns" != unset ] || { echo "mpi_netns.sh: rank $r: MPI_NETNS_$r is not set" >&2; exit 2; }
# MPI_ENV_<rank>: VAR=value words for this rank only (its device, say:
# UCX_NET_DEVICES=gaudi_51:1)
eval "envs=\${MPI_ENV_$r-}"
[ -z "$envs" ] || set -- env $envs "$@"
# empty: stay in mpirun's namespace
[ -n "$ns" ] || exec "$@"
# nsenter rather than "ip netns exec": only the network namespace changes
# (no remount of /sys, which also fails in a chroot)
exec nsenter --net="/run/netns/$ns" "$@"
