#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""torch.distributed benchmark: gcoll against gloo and mpi, same host, same run.

  bench.py [--ranks 2] [--reps 3]

all_reduce (float32, SUM) bus bandwidth from 1 KiB to 64 MiB, and the DDP
step time of collectives/bindings/torch/examples/ddp_train.py.  Each
backend runs --reps times, interleaved; the table shows the median over the
repetitions and the spread (min-max), then the ratio of the medians.
Never passes or fails on speed.
"""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PREFIX = "/build/prefix/lib/python3/dist-packages"
SIZES = [1 << k for k in range(10, 27, 2)]  # 1 KiB .. 64 MiB


def worker():
    sys.path.insert(0, PREFIX)
    import torch
    import torch.distributed as dist
    import torch_gcoll  # noqa: F401
    torch.set_num_threads(1)
    backend = os.environ["BENCH_BACKEND"]
    dist.init_process_group(backend)
    rank, n = dist.get_rank(), dist.get_world_size()
    out = {"allreduce": {}, "ddp": None}
    for size in SIZES:
        x = torch.ones(size // 4)
        iters = max(3, min(200, (8 << 20) // size))
        for _ in range(2):
            dist.all_reduce(x)
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(x)
        t = (time.perf_counter() - t0) / iters
        tt = torch.tensor([t], dtype=torch.float64)
        dist.all_reduce(tt, op=dist.ReduceOp.MAX)
        t = float(tt)
        out["allreduce"][size] = size / t * 2 * (n - 1) / n / 1e9  # busbw GB/s
    sys.dont_write_bytecode = True  # the checkout stays clean
    sys.path.insert(0, os.path.join(HERE, "../../collectives/bindings/torch/examples"))
    from ddp_train import make_model, train
    torch.manual_seed(0)
    m = torch.nn.parallel.DistributedDataParallel(make_model(512, 4))
    times = []
    train(m, steps=25, seed=rank, times=times)
    out["ddp"] = statistics.median(times[5:]) * 1e3
    if rank == 0:
        print("RESULT " + json.dumps(out), flush=True)
    dist.destroy_process_group()
    sys.stdout.flush()
    os._exit(0)


def run(backend, n):
    env = dict(os.environ, BENCH_BACKEND=backend, USE_LIBUV="0", GLOO_SOCKET_IFNAME="lo",
               OMP_NUM_THREADS="1", MASTER_ADDR="127.0.0.1")
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        env["MASTER_PORT"] = str(s.getsockname()[1])
    if backend == "mpi":
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(n),
               "--mca", "btl", "self,vader", sys.executable, __file__, "--worker"]
        procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)]
    else:
        procs = []
        for r in range(n):
            e = dict(env, RANK=str(r), WORLD_SIZE=str(n))
            procs.append(subprocess.Popen([sys.executable, __file__, "--worker"], env=e,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    try:
        outs = [p.communicate(timeout=300) for p in procs]
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        return None, "timed out"
    for o, _ in outs:
        for ln in o.decode().splitlines():
            if ln.startswith("RESULT "):
                return json.loads(ln[7:]), ""
    err = b"".join(e for _, e in outs).decode().strip().splitlines()
    return None, (err[-1] if err else "no result")[:200]


def fmt(vals):
    if not vals:
        return "-"
    return "%.3f (%.3f-%.3f)" % (statistics.median(vals), min(vals), max(vals))


def main():
    if "--worker" in sys.argv:
        worker()
        return 0
    n = int(sys.argv[sys.argv.index("--ranks") + 1]) if "--ranks" in sys.argv else 2
    reps = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 3
    backends = ["gcoll", "gloo", "mpi"]
    res = {b: [] for b in backends}
    why = {}
    for _ in range(reps):
        for b in backends:
            if b in why:
                continue
            r, err = run(b, n)
            if r is None:
                why[b] = err
            else:
                res[b].append(r)
    print("# torch.distributed all_reduce float32 SUM, %d ranks, busbw GB/s: median (min-max) "
          "over %d runs" % (n, reps))
    for b, w in why.items():
        print("# %s backend skipped: %s" % (b, w))
    print("# %10s %24s %24s %24s %10s %10s" % ("bytes", "gcoll", "gloo", "mpi",
                                               "gcoll/gloo", "gcoll/mpi"))
    for s in SIZES:
        v = {b: [r["allreduce"][str(s)] if str(s) in r["allreduce"] else r["allreduce"][s]
                 for r in res[b]] for b in backends}
        def ratio(a, b):
            return "%.2fx" % (statistics.median(v[a]) / statistics.median(v[b])) \
                if v[a] and v[b] else "-"
        print("  %10d %24s %24s %24s %10s %10s" % (s, fmt(v["gcoll"]), fmt(v["gloo"]),
                                                   fmt(v["mpi"]), ratio("gcoll", "gloo"),
                                                   ratio("gcoll", "mpi")))
    d = {b: [r["ddp"] for r in res[b]] for b in backends}
    print("# DDP step (ddp_train.py model 64-512x4-10, batch 32), ms: median (min-max)")
    for b in backends:
        print("  %-6s %s" % (b, fmt(d[b])))
    if d["gcoll"] and d["gloo"]:
        print("# DDP step gloo/gcoll: %.2fx (>1: gcoll faster)"
              % (statistics.median(d["gloo"]) / statistics.median(d["gcoll"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
