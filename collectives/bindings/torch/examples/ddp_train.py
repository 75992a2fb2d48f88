#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Train a small model with DistributedDataParallel over torch_gcoll.

One host, two processes (Debian's torch has no libuv: use torch_gcoll.run,
which is torchrun with TCPStore's use_libuv turned off):

    python3 -m torch_gcoll.run --nproc-per-node 2 \\
        collectives/bindings/torch/examples/ddp_train.py --backend gcoll

--backend gloo runs the same training on gloo; --hbm copies each batch into
an HBM tensor (torch_gcoll.empty_hbm on gaudi_nic.<local rank>, or on
gaudi_nic.<N> with --hbm-device N) before the forward pass.
Prints the loss and the median step time on rank 0.

Across two devices, one rank per namespace (as make demo does): start each
rank with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set, and
--hbm-device set to the rank's own device; libgcoll then moves the
gradients over the devices' RoCE ports (libfabric verbs;ofi_rxm).
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

try:
    import torch_gcoll
except ImportError:  # run from the source tree after make
    sys.path.insert(0, "/build/prefix/lib/python3/dist-packages")
    import torch_gcoll


def make_model(width=256, depth=3):
    layers = [nn.Linear(64, width), nn.ReLU()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.ReLU()]
    layers += [nn.Linear(width, 10)]
    return nn.Sequential(*layers)


def train(model, steps=10, seed=0, batch=32, hbm_device=None, times=None):
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    loss = torch.tensor(0.0)
    for _ in range(steps):
        x = torch.randn(batch, 64, generator=g)
        y = torch.randint(0, 10, (batch,), generator=g)
        if hbm_device is not None:
            h = torch_gcoll.empty_hbm(*x.shape, dtype=x.dtype, device=hbm_device)
            h.copy_(x)
            x = h
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()  # DDP all-reduces the gradients here
        opt.step()
        if times is not None:
            times.append(time.perf_counter() - t0)
    return float(loss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="gcoll", choices=["gcoll", "gloo", "mpi"])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--hbm", action="store_true", help="batches in HBM (gaudi_nic devices)")
    ap.add_argument("--hbm-device", type=int, default=None,
                    help="the gaudi_nic device of this rank's HBM (implies --hbm; "
                    "default: the local rank)")
    a = ap.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group(a.backend)
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(make_model(a.width))
    times = []
    hbm = a.hbm_device
    if hbm is None and a.hbm:
        hbm = int(os.environ.get("LOCAL_RANK", rank))
    loss = train(model, a.steps, seed=rank, hbm_device=hbm, times=times)
    if rank == 0:
        how = ""
        if a.backend == "gcoll":
            how = " over %s" % torch_gcoll.transport()["provider"]
        print("backend %s%s ranks %d steps %d loss %.4f step median %.2f ms%s"
              % (a.backend, how, dist.get_world_size(), a.steps, loss,
                 statistics.median(times[2:] or times) * 1e3,
                 ", batches in HBM" if hbm is not None else ""))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
