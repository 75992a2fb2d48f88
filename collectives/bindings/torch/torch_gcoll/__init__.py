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

__all__ = ["empty_hbm", "is_hbm", "ProcessGroupGcoll", "BACKEND"]

BACKEND = "gcoll"
ProcessGroupGcoll = _C.ProcessGroupGcoll


def _create(store, rank, size, timeout):
    return _C.ProcessGroupGcoll(store, rank, size, timeout)


if BACKEND not in dist.Backend.backend_list:
    dist.Backend.register_backend(BACKEND, _create, devices=["cpu"])

# Communicators are torn down (bounded) before the interpreter goes away,
# whether or not destroy_process_group() was called.
atexit.register(_C._shutdown_all)


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
