# SPDX-License-Identifier: MIT
"""python3 -m torch_gcoll.run [torchrun arguments]

torchrun (torch.distributed.run) for a torch built without libuv, such as
Debian's: its rendezvous stores are created with TCPStore's default
use_libuv=True, which such a build refuses.  This wraps TCPStore so that
use_libuv is always False, sets USE_LIBUV=0 for the workers, then runs
torch.distributed.run's main() with the same arguments.
"""
import os
import sys

os.environ["USE_LIBUV"] = "0"

import torch.distributed as dist  # noqa: E402

_TCPStore = dist.TCPStore


def _tcpstore(*args, **kwargs):
    kwargs["use_libuv"] = False
    return _TCPStore(*args, **kwargs)


def _patch():
    import torch.distributed.rendezvous  # noqa: F401
    import torch.distributed.run  # noqa: F401  (imports the rendezvous backends)
    import torch.distributed.elastic.rendezvous.static_tcp_rendezvous  # noqa: F401
    import torch.distributed.elastic.rendezvous.c10d_rendezvous_backend  # noqa: F401
    import torch.distributed.elastic.utils.distributed  # noqa: F401
    for name, mod in list(sys.modules.items()):
        if name.startswith("torch.distributed") and getattr(mod, "TCPStore", None) is _TCPStore:
            mod.TCPStore = _tcpstore


def main(argv=None):
    _patch()
    from torch.distributed.run import main as torchrun_main
    torchrun_main(argv)


if __name__ == "__main__":
    main()
