# SPDX-License-Identifier: MIT
"""torch_gcoll: the torch.distributed backend "gcoll" on libgcoll.

    import torch_gcoll                      # registers the backend
    torch.distributed.init_process_group("gcoll", ...)

Also: empty_hbm() / is_hbm() for tensors whose storage is HBM of a
gaudi_nic device, and ``python3 -m torch_gcoll.run`` (torchrun for a torch
built without libuv, like Debian's).
"""
import atexit
import os

# Debian's torch has no libuv: TCPStore (env:// and tcp://) needs this.
os.environ.setdefault("USE_LIBUV", "0")

import torch
import torch.distributed as dist

from . import _C


def _no_libuv_rendezvous():
    # Under torchrun, workers reach the agent's store through
    # torch.distributed.rendezvous.TCPStore(...) with the default
    # use_libuv=True, which a torch without libuv refuses.
    import importlib
    rdzv = importlib.import_module("torch.distributed.rendezvous")
    orig = rdzv.TCPStore
    if getattr(orig, "_gcoll_no_libuv", False):
        return

    def tcpstore(*args, **kwargs):
        if os.environ.get("USE_LIBUV") == "0":
            kwargs["use_libuv"] = False
        return orig(*args, **kwargs)
    tcpstore._gcoll_no_libuv = True
    rdzv.TCPStore = tcpstore


_no_libuv_rendezvous()

__all__ = ["empty_hbm", "is_hbm", "transport", "ProcessGroupGcoll", "BACKEND"]

BACKEND = "gcoll"
ProcessGroupGcoll = _C.ProcessGroupGcoll


def _create(store, rank, size, timeout):
    return _C.ProcessGroupGcoll(store, rank, size, timeout)


if BACKEND not in dist.Backend.backend_list:
    dist.Backend.register_backend(BACKEND, _create, devices=["cpu"])

# Communicators are torn down (bounded) before the interpreter goes away,
# whether or not destroy_process_group() was called.
atexit.register(_C._shutdown_all)


def _shutdown_on_destroy():
    # destroy_process_group() shuts down only NCCL backends explicitly
    # (distributed_c10d._shutdown_backend); others go with their last
    # reference, which DDP's reducer keeps until it is garbage-collected.
    # Shut gcoll's communicators down there too, so that destroy releases
    # the memory registrations (HBM included) and the peer connections.
    import torch.distributed.distributed_c10d as c10d
    orig = getattr(c10d, "_shutdown_backend", None)
    if orig is None or getattr(orig, "_gcoll", False):
        return

    def shutdown_backend(pg):
        orig(pg)
        try:
            be = pg._get_backend(torch.device("cpu"))
        except RuntimeError:
            return
        if isinstance(be, _C.ProcessGroupGcoll):
            be._shutdown()
    shutdown_backend._gcoll = True
    c10d._shutdown_backend = shutdown_backend


_shutdown_on_destroy()


def empty_hbm(*size, dtype=torch.float32, device=0):
    """An uninitialised CPU tensor whose storage is HBM of gaudi_nic.<device>.

    The memory is allocated with hl-thunk, mapped for the CPU and exported as
    a dma-buf (collectives register it natively); it is freed with the
    tensor's storage.  Raises RuntimeError if the device does not exist.
    """
    if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)):
        size = tuple(size[0])
    return _C.empty_hbm([int(s) for s in size], torch.empty(0, dtype=dtype), int(device))


def is_hbm(t):
    """True if t's storage is HBM allocated by empty_hbm()."""
    return _C.is_hbm(t)


def transport(group=None):
    """What the gcoll backend of group (default: the world) runs on.

    A dict: "provider" (the libfabric provider, e.g. "verbs;ofi_rxm" on
    gaudi ports, "tcp" or "shm" elsewhere), "rails", "dmabuf_native" (1 if
    the provider registers dma-bufs itself), "rx_cq_data", and the HBM
    registrations made so far: "hbm_native" (dma-buf MRs) and
    "hbm_fallback" (through the CPU mapping or a host bounce buffer).
    """
    pg = group if group is not None else dist.group.WORLD
    if pg is None:
        raise RuntimeError("torch_gcoll.transport: no process group (call init_process_group)")
    be = pg._get_backend(torch.device("cpu"))
    if not isinstance(be, _C.ProcessGroupGcoll):
        raise RuntimeError("torch_gcoll.transport: the group's CPU backend is %s, not gcoll"
                           % type(be).__name__)
    info = be._transport()
    return {k: (v if k == "provider" else int(v)) for k, v in info.items()}
