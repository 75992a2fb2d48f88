#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""In the guest: torch_gcoll.empty_hbm tensors on two gaudi_nic devices
($HBM_DEVS, default "0 1") used in collectives, 2 ranks (rank r on the
r-th device) over a host provider (tcp).
TAP from rank 0.  The path over gaudi verbs between two devices waits for
collectives on the device (issue 16)."""
import datetime
import os
import subprocess
import sys

PREFIX = "/build/prefix/lib/python3/dist-packages"


def hbm_used(dev):
    with open("/sys/bus/platform/devices/gaudi_nic.%d/gaudi_nic/hbm_used" % dev) as f:
        return int(f.read())


def worker():
    sys.path.insert(0, PREFIX)
    import torch
    import torch.distributed as dist
    import torch_gcoll
    torch.set_num_threads(1)
    dist.init_process_group("gcoll", timeout=datetime.timedelta(seconds=120))
    rank = dist.get_rank()
    dev = [int(d) for d in os.environ.get("HBM_DEVS", "0 1").split()][rank]
    res = []

    def ok(desc, cond):
        res.append((desc, bool(cond)))

    before = hbm_used(dev)
    t = torch_gcoll.empty_hbm(1 << 18, dtype=torch.float32, device=dev)
    ok("empty_hbm on gaudi_nic.%d: is_hbm, HBM in use" % dev,
       torch_gcoll.is_hbm(t) and not torch_gcoll.is_hbm(torch.ones(3)) and hbm_used(dev) > before)
    t.fill_(rank + 1)
    dist.all_reduce(t)
    ok("all_reduce 1 MiB in HBM", torch.all(t == 3).item())
    b = torch_gcoll.empty_hbm(4, 1000, dtype=torch.int64, device=dev)
    b.copy_(torch.arange(4000).view(4, 1000) * (rank + 1))
    dist.broadcast(b, 1)
    ok("broadcast from rank 1 into HBM", torch.equal(b, torch.arange(4000).view(4, 1000) * 2))
    o = torch_gcoll.empty_hbm(2 * 5000, dtype=torch.float32, device=dev)
    i = torch.full((5000,), float(rank))
    dist.all_gather_into_tensor(o, i)
    ok("all_gather_into_tensor into HBM", torch.equal(o, torch.cat([torch.zeros(5000), torch.ones(5000)])))
    s = torch_gcoll.empty_hbm(300000, dtype=torch.float32, device=dev)
    if rank == 0:
        s.copy_(torch.arange(300000, dtype=torch.float32))
        dist.send(s, 1, tag=4)
        ok("send from HBM", True)
    else:
        dist.recv(s, 0, tag=4)
        ok("recv into HBM", torch.equal(s, torch.arange(300000, dtype=torch.float32)))
    del t, b, o, s
    dist.barrier()
    dist.destroy_process_group()
    import gc
    gc.collect()
    ok("HBM freed with the tensors and the group", hbm_used(dev) == before)
    try:
        torch_gcoll.empty_hbm(4, device=9)
        ok("empty_hbm on missing gaudi_nic.9 raises", False)
    except RuntimeError as e:
        ok("empty_hbm on missing gaudi_nic.9 raises", "gaudi_nic device 9" in str(e))
    if rank == 0:
        for k, (d, c) in enumerate(res, 1):
            print("%s %d - %s" % ("ok" if c else "not ok", k, d))
        print("1..%d" % len(res), flush=True)
    else:
        bad = [d for d, c in res if not c]
        for d in bad:
            print("# rank 1 failed: %s" % d, file=sys.stderr)
        if bad:
            sys.stderr.flush()
            os._exit(1)
    sys.stdout.flush()
    os._exit(0)


def main():
    if "--worker" in sys.argv:
        return worker()
    procs = []
    for r in range(2):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT="29617", USE_LIBUV="0", GCOLL_PROVIDER="tcp", GCOLL_IFACE="lo",
                   GCOLL_BOOTSTRAP_ADDR="127.0.0.1", OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, __file__, "--worker"], env=env))
    rcs = [p.wait() for p in procs]
    if any(rcs):
        print("not ok - ranks exited %s" % rcs)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
