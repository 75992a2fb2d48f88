#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""In the guest: torch.distributed on gcoll between two gaudi_nic devices
over a cable, one rank per device (tests/torch/hbm_vm.sh starts rank r in
its own namespace, with HBM_DEV set to its device).  No provider is forced:
libgcoll must pick libfabric's verbs;ofi_rxm on the gaudi port.  Checked:
  - the transport chosen, and HBM tensors registered as native dma-buf MRs;
  - collectives and send/recv on torch_gcoll.empty_hbm tensors;
  - DDP training over gcoll (batches in HBM) ends with the parameters of
    the same training over gloo on the same cable, and equal on both ranks;
  - HBM is freed with the tensors and the group; a missing device raises;
  - rank 1 then resets its device (devlink dev reload) under a live HBM
    tensor: the tensor reads zeroes, not the HBM, and empty_hbm works on
    the reset device again (a new open: the old fd only says EIO).
TAP from rank 0; rank 1 reports its own failures on stderr and exits 1."""
import datetime
import os
import subprocess
import sys
import time

PREFIX = "/build/prefix/lib/python3/dist-packages"
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "../../collectives/bindings/torch/examples")


def hbm_used(dev):
    with open("/sys/bus/platform/devices/gaudi_nic.%d/gaudi_nic/hbm_used" % dev) as f:
        return int(f.read())


def main():
    sys.path.insert(0, PREFIX)
    sys.path.insert(0, EXAMPLES)
    import torch
    import torch.distributed as dist
    import torch_gcoll
    from torch.nn.parallel import DistributedDataParallel as DDP
    from ddp_train import make_model, train
    torch.set_num_threads(1)
    dist.init_process_group("gcoll", timeout=datetime.timedelta(seconds=120))
    rank = dist.get_rank()
    dev = int(os.environ["HBM_DEV"])
    res = []

    t0 = time.monotonic()

    def ok(desc, cond, why=""):
        res.append((desc, bool(cond), why))
        # progress, for a rank the shell's timeout ends: where it was
        print("progress: rank %d, %.0f s: %s: %s" % (rank, time.monotonic() - t0, desc,
              "ok" if cond else "FAILED"), file=sys.stderr, flush=True)

    tr = torch_gcoll.transport()
    ok("the provider chosen by default is verbs;ofi_rxm (%s)" % tr.get("provider"),
       tr.get("provider") == "verbs;ofi_rxm" and tr.get("dmabuf_native") == 1, str(tr))

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
    o = torch_gcoll.empty_hbm(2 * 5000, dtype=torch.bfloat16, device=dev)
    i = torch.full((5000,), float(rank), dtype=torch.bfloat16)
    dist.all_gather_into_tensor(o, i)
    ok("all_gather_into_tensor bfloat16 into HBM",
       torch.equal(o, torch.cat([torch.zeros(5000), torch.ones(5000)]).to(torch.bfloat16)))
    rs = torch_gcoll.empty_hbm(3000, dtype=torch.float64, device=dev)
    rin = torch_gcoll.empty_hbm(6000, dtype=torch.float64, device=dev)
    rin.copy_(torch.arange(6000, dtype=torch.float64) * (rank + 1))
    dist.reduce_scatter_tensor(rs, rin)
    ok("reduce_scatter_tensor float64 HBM to HBM",
       torch.equal(rs, torch.arange(3000 * rank, 3000 * (rank + 1), dtype=torch.float64) * 3))
    s = torch_gcoll.empty_hbm(300000, dtype=torch.float32, device=dev)
    if rank == 0:
        s.copy_(torch.arange(300000, dtype=torch.float32))
        dist.send(s, 1, tag=4)
        ok("send 1.2 MB from HBM", True)
    else:
        dist.recv(s, 0, tag=4)
        ok("recv 1.2 MB into HBM", torch.equal(s, torch.arange(300000, dtype=torch.float32)))
    tr = torch_gcoll.transport()
    ok("HBM tensors registered as native dma-buf MRs, none through a fallback "
       "(%s native)" % tr.get("hbm_native"),
       tr.get("hbm_native", 0) >= 4 and tr.get("hbm_fallback") == 0, str(tr))
    del t, b, o, rs, rin, s

    # DDP over gcoll with its batches in HBM, against DDP over gloo on the
    # same cable (GLOO_SOCKET_IFNAME is the rank's gaudi port)
    gloo = dist.new_group(backend="gloo")
    torch.manual_seed(0)
    m1 = make_model(width=64)
    m2 = make_model(width=64)
    m2.load_state_dict(m1.state_dict())
    init = [p.detach().clone() for p in m1.parameters()]
    d1 = DDP(m1)
    d2 = DDP(m2, process_group=gloo)
    l1 = train(d1, steps=5, seed=100 + rank, hbm_device=dev)
    l2 = train(d2, steps=5, seed=100 + rank)
    worst = max(float((p1 - p2).abs().max()) for p1, p2 in zip(m1.parameters(), m2.parameters()))
    moved = any(not torch.equal(p, q) for p, q in zip(m1.parameters(), init))
    ok("DDP 5 steps over gcoll (batches in HBM) == over gloo (loss %.4f vs %.4f)" % (l1, l2),
       moved and worst <= 1e-5 and abs(l1 - l2) < 1e-4, "max param difference %g" % worst)
    flat = torch.cat([p.detach().flatten() for p in m1.parameters()])
    peer = flat.clone()
    dist.broadcast(peer, 0)
    ok("DDP parameters equal on both ranks", torch.equal(flat, peer))
    del d1, d2, m1, m2

    dist.barrier()
    dist.destroy_process_group()
    import gc
    gc.collect()
    ok("HBM freed with the tensors and the group", hbm_used(dev) == before,
       "hbm_used %d, %d before" % (hbm_used(dev), before))
    try:
        torch_gcoll.empty_hbm(4, device=9)
        ok("empty_hbm on missing gaudi_nic.9 raises", False)
    except RuntimeError as e:
        ok("empty_hbm on missing gaudi_nic.9 raises", "gaudi_nic device 9" in str(e), str(e))
    if rank == 1:
        # the reset (from the initial namespace, where the devlink instance
        # is); rank 1's failures go to stderr and fail the test
        t = torch_gcoll.empty_hbm(1024, dtype=torch.float32, device=dev)
        t.fill_(5)
        r = subprocess.run(["nsenter", "-t", "1", "-n", "devlink", "dev", "reload",
                            "platform/gaudi_nic.%d" % dev], capture_output=True, text=True)
        ok("devlink dev reload of gaudi_nic.%d under a live HBM tensor" % dev,
           r.returncode == 0, r.stderr)
        ok("the tensor reads zeroes after the reset, not the HBM", torch.all(t == 0).item())
        t2 = torch_gcoll.empty_hbm(1024, dtype=torch.float32, device=dev)
        t2.fill_(3)
        ok("empty_hbm on the reset device works again", torch.all(t2 == 3).item())
        del t, t2
        gc.collect()
        ok("the reset device's HBM is freed with the tensors", hbm_used(dev) <= before,
           "hbm_used %d, %d before" % (hbm_used(dev), before))
    if rank == 0:
        for k, (d, c, why) in enumerate(res, 1):
            print("%s %d - %s" % ("ok" if c else "not ok", k, d))
            if not c and why:
                print("# " + why)
        print("1..%d" % len(res), flush=True)
    bad = [(d, why) for d, c, why in res if not c]
    for d, why in bad:
        print("# rank %d failed: %s %s" % (rank, d, why), file=sys.stderr)
    # a normal interpreter exit (the shell's timeout bounds it)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
