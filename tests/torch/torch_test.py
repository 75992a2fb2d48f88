#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of torch_gcoll (the torch.distributed backend "gcoll"), TAP output.

  torch_test.py ops  --provider tcp|shm --ranks 2,3,4
      every backend operation against gloo, in the same run
  torch_test.py ddp  --provider tcp|shm --ranks 2
      DDP training with gcoll ends with gloo's parameters
  torch_test.py fail
      killed rank, timeout, mismatched size, unsupported op, missing device:
      each a clear Python exception within a bounded time

The launcher starts one process per rank (this script again, with RANK and
WORLD_SIZE set); rank 0 prints the TAP lines, the launcher prints the plan.
"""
import argparse
import datetime
import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(n, argv, env_extra=None, timeout=90):
    """Run this script as n ranks; returns (rank0 stdout, returncodes, secs)."""
    port = free_port()
    procs = []
    t0 = time.time()
    for r in range(n):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(n), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), USE_LIBUV="0", GLOO_SOCKET_IFNAME="lo",
                   OMP_NUM_THREADS="1", GCOLL_SHM_PREFIX="gct%d" % port)
        env.update(env_extra or {})
        procs.append(subprocess.Popen([sys.executable, __file__, "--worker"] + argv, env=env,
                                      stdout=subprocess.PIPE if r == 0 else subprocess.DEVNULL,
                                      stderr=None))
    out = ""
    try:
        out, _ = procs[0].communicate(timeout=timeout)
        out = out.decode()
        rcs = []
        for p in procs:
            rcs.append(p.wait(timeout=max(1, timeout - (time.time() - t0))))
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        rcs = [p.wait() for p in procs]
        out += "\n# TIMEOUT after %ds\n" % timeout
    return out, rcs, time.time() - t0


# ------------------------------------------------------------------ workers

def setup(timeout_s=60):
    sys.path.insert(0, os.environ.get("TORCH_GCOLL_PATH", "/build/prefix/lib/python3/dist-packages"))
    import torch
    import torch.distributed as dist
    import torch_gcoll  # noqa: F401
    torch.set_num_threads(1)
    dist.init_process_group("gcoll", init_method="env://",
                            timeout=datetime.timedelta(seconds=timeout_s))
    return torch, dist


class Results:
    def __init__(self, dist, gloo):
        self.items = []
        self.dist, self.gloo = dist, gloo

    def check(self, name, fn):
        try:
            r = fn()
            ok, msg = (r, "") if isinstance(r, bool) else r
        except Exception as e:  # noqa: BLE001
            ok, msg = False, "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300])
        self.items.append((name, bool(ok), msg))

    def report(self, prefix):
        allr = [None] * self.dist.get_world_size()
        self.dist.all_gather_object(allr, self.items, group=self.gloo)
        if self.dist.get_rank() == 0:
            for i, (name, _, _) in enumerate(self.items):
                bad = [(r, allr[r][i][2]) for r in range(len(allr)) if not allr[r][i][1]]
                if bad:
                    print("not ok - %s %s" % (prefix, name))
                    for r, m in bad:
                        print("# rank %d: %s" % (r, m))
                else:
                    print("ok - %s %s" % (prefix, name))
            sys.stdout.flush()


def worker_ops(args):
    torch, dist = setup()
    R = dist.ReduceOp
    rank, n = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(backend="gloo")
    res = Results(dist, gloo)
    prefix = "%s n=%d" % (args.provider, n)
    g = torch.Generator().manual_seed(1234 + rank)

    def t_transport():
        import torch_gcoll
        tr = torch_gcoll.transport()
        if tr["provider"] != args.provider or tr["rails"] < 1 or tr["hbm_fallback"] != 0:
            return False, "transport() %s" % tr
        try:
            torch_gcoll.transport(gloo)
            return False, "transport(gloo group) did not raise"
        except RuntimeError as e:
            return ("not gcoll" in str(e)) or (False, str(e))
    res.check("torch_gcoll.transport(): provider %s; refuses a gloo group" % args.provider,
              t_transport)

    def rnd(shape, dt, lo=-3, hi=4):
        if dt == torch.bool:
            return torch.randint(0, 2, shape, generator=g).bool()
        if dt.is_floating_point:
            return (torch.rand(shape, generator=g, dtype=torch.float64) * 4 - 2).to(dt)
        if dt.is_complex:
            return torch.randn(shape, generator=g, dtype=dt)
        if dt == torch.uint8:
            lo = 0
        return torch.randint(lo, hi, shape, generator=g).to(dt)

    def same(a, b, dt=None):
        dt = dt or a.dtype
        if dt in (torch.float16, torch.bfloat16):
            return torch.allclose(a.double(), b.double(), rtol=2e-2, atol=5e-2)
        if dt.is_floating_point or dt.is_complex:
            return torch.allclose(a, b, rtol=1e-5, atol=1e-6)
        return torch.equal(a, b)

    def gathered(x):
        """every rank's x, through gloo"""
        out = [torch.empty_like(x) for _ in range(n)]
        dist.all_gather(out, x, group=gloo)
        return out

    dtypes = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8,
              torch.uint8, torch.int32, torch.int64, torch.bool]

    # all_reduce: every dtype and op; reference from gloo (gloo's own all_reduce
    # where gloo has the op, else gloo all_gather reduced here)
    for dt in dtypes:
        def t_allreduce(dt=dt):
            ops = [R.SUM, R.PRODUCT, R.MIN, R.MAX] + ([R.AVG] if dt.is_floating_point else [])
            for op in ops:
                x = rnd((37,), dt, -2, 3)
                a = x.clone()
                dist.all_reduce(a, op=op)
                if op == R.AVG:
                    ref = torch.stack([v.double() for v in gathered(x)]).mean(0).to(dt)
                elif dt in (torch.float16, torch.bfloat16, torch.bool):
                    st = torch.stack(gathered(x)).double()
                    f = {R.SUM: lambda s: s.sum(0), R.PRODUCT: lambda s: s.prod(0),
                         R.MIN: lambda s: s.min(0).values, R.MAX: lambda s: s.max(0).values}[op]
                    ref = f(st)
                    ref = (ref != 0) if dt == torch.bool else ref.to(dt)
                else:
                    ref = x.clone()
                    dist.all_reduce(ref, op=op, group=gloo)
                if not same(a, ref):
                    return False, "%s %s: %s != %s" % (dt, op, a[:5].tolist(), ref[:5].tolist())
            return True
        res.check("all_reduce %s SUM/PRODUCT/MIN/MAX%s" % (str(dt)[6:], "/AVG" if dt.is_floating_point else ""), t_allreduce)

    def t_premul():
        x = rnd((100,), torch.float32)
        a = x.clone()
        dist.all_reduce(a, op=dist._make_nccl_premul_sum(0.25))
        ref = x * 0.25
        dist.all_reduce(ref, group=gloo)
        return same(a, ref)
    res.check("all_reduce PREMUL_SUM", t_premul)

    def t_large():
        x = rnd((1 << 20,), torch.float32)  # 4 MiB: ring, rendezvous
        a = x.clone()
        dist.all_reduce(a)
        ref = x.clone()
        dist.all_reduce(ref, group=gloo)
        return same(a, ref)
    res.check("all_reduce float32 4 MiB", t_large)

    def t_noncontig():
        base = rnd((16, 24), torch.float32)
        x = base.t()  # non-contiguous view
        assert not x.is_contiguous()
        a = base.clone().t()
        dist.all_reduce(a)
        ref = x.contiguous()
        dist.all_reduce(ref, group=gloo)
        return same(a, ref) and not a.is_contiguous()
    res.check("all_reduce non-contiguous", t_noncontig)

    def t_complex():
        x = rnd((10,), torch.complex64)
        a = x.clone()
        dist.all_reduce(a)
        ref = torch.stack(gathered(x)).sum(0)
        return same(a, ref)
    res.check("all_reduce complex64 SUM", t_complex)

    def t_coalesced():
        xs = [rnd((5,), torch.float32), rnd((3, 4), torch.float32)]
        a = [x.clone() for x in xs]
        dist.all_reduce_coalesced(a)
        refs = [x.clone() for x in xs]
        for r in refs:
            dist.all_reduce(r, group=gloo)
        return all(same(u, v) for u, v in zip(a, refs))
    res.check("all_reduce_coalesced", t_coalesced)

    def t_broadcast():
        for root in range(n):
            for dt in (torch.float32, torch.int16, torch.complex128, torch.bool):
                x = rnd((2, 9), dt)
                a, ref = x.clone(), x.clone()
                dist.broadcast(a, root)
                # gloo moves these dtypes as bytes
                dist.broadcast(ref.view(torch.uint8), root, group=gloo)
                if not torch.equal(a, ref):
                    return False, "root %d %s" % (root, dt)
        return True
    res.check("broadcast every root, int16/complex128/bool", t_broadcast)

    def t_reduce():
        for root in range(n):
            for op in (R.SUM, R.MAX):
                x = rnd((33,), torch.int64)
                a, ref = x.clone(), x.clone()
                dist.reduce(a, root, op=op)
                dist.reduce(ref, root, op=op, group=gloo)
                if rank == root and not torch.equal(a, ref):
                    return False, "root %d %s" % (root, op)
        return True
    res.check("reduce every root SUM/MAX", t_reduce)

    def t_allgather():
        for dt in (torch.float32, torch.complex64, torch.uint8):
            x = rnd((3, 5), dt)
            a = [torch.empty(5, 3, dtype=dt).t() for _ in range(n)]  # non-contiguous outputs
            dist.all_gather(a, x)
            ref = gathered(x)
            if not all(torch.equal(u, v) for u, v in zip(a, ref)):
                return False, str(dt)
            o = torch.empty(n * 15, dtype=dt)
            dist.all_gather_into_tensor(o, x)
            if not torch.equal(o, torch.cat([r.reshape(-1) for r in ref])):
                return False, "into_tensor " + str(dt)
        return True
    res.check("all_gather, all_gather_into_tensor (non-contiguous, complex)", t_allgather)

    be = dist.distributed_c10d._get_default_group()

    def t_ag_coalesced():
        xs = [rnd((4,), torch.float32), rnd((7,), torch.int32)]
        outs = [torch.empty(n * x.numel(), dtype=x.dtype) for x in xs]
        be.allgather_into_tensor_coalesced(outs, xs).wait()
        return all(torch.equal(o, torch.cat(gathered(x))) for o, x in zip(outs, xs))
    res.check("allgather_into_tensor_coalesced", t_ag_coalesced)

    def t_reduce_scatter():
        for op in (R.SUM, R.MAX, R.AVG):
            xs = [rnd((6,), torch.float32) for _ in range(n)]
            o = torch.empty(6)
            dist.reduce_scatter(o, [x.clone() for x in xs], op=op)
            ref_all = torch.stack([torch.stack(gathered(x)) for x in xs])  # [dst, src, 6]
            f = {R.SUM: lambda s: s.sum(0), R.MAX: lambda s: s.max(0).values,
                 R.AVG: lambda s: s.mean(0)}[op]
            if not same(o, f(ref_all[rank])):
                return False, "list %s" % op
            x = torch.cat(xs)
            o2 = torch.empty(6)
            dist.reduce_scatter_tensor(o2, x, op=op)
            if not same(o2, f(ref_all[rank])):
                return False, "tensor %s" % op
        return True
    res.check("reduce_scatter, reduce_scatter_tensor SUM/MAX/AVG", t_reduce_scatter)

    def t_rs_coalesced():
        xs = [rnd((n * 3,), torch.float64), rnd((n * 2,), torch.float64)]
        outs = [torch.empty(3, dtype=torch.float64), torch.empty(2, dtype=torch.float64)]
        be.reduce_scatter_tensor_coalesced(outs, [x.clone() for x in xs]).wait()
        for o, x in zip(outs, xs):
            ref = x.clone()
            dist.all_reduce(ref, group=gloo)
            if not same(o, ref.view(n, -1)[rank]):
                return False
        return True
    res.check("reduce_scatter_tensor_coalesced", t_rs_coalesced)

    def t_alltoall():
        x = rnd((n * 4,), torch.int32)
        a, ref = torch.empty_like(x), torch.empty_like(x)
        dist.all_to_all_single(a, x)
        dist.all_to_all_single(ref, x, group=gloo)
        if not torch.equal(a, ref):
            return False, "even"
        # uneven: rank r sends (r + p) % 3 rows of 2 to peer p
        ins = [(rank + p) % 3 for p in range(n)]
        outs = [(p + rank) % 3 for p in range(n)]
        x = rnd((sum(ins), 2), torch.float32)
        a = torch.empty(sum(outs), 2)
        ref = torch.empty(sum(outs), 2)
        dist.all_to_all_single(a, x, outs, ins)
        dist.all_to_all_single(ref, x, outs, ins, group=gloo)
        if not torch.equal(a, ref):
            return False, "uneven"
        xs = [rnd((p + 1, 3), torch.float64) for p in range(n)]
        a = [torch.empty(rank + 1, 3, dtype=torch.float64) for _ in range(n)]
        ref = [torch.empty(rank + 1, 3, dtype=torch.float64) for _ in range(n)]
        dist.all_to_all(a, xs)
        # gloo has no all_to_all: gather every rank's inputs, pick what src sent me
        off = sum(p + 1 for p in range(rank)) * 3
        ref = [c[off:off + (rank + 1) * 3].view(rank + 1, 3)
               for c in gathered(torch.cat([v.reshape(-1) for v in xs]))]
        return all(torch.equal(u, v) for u, v in zip(a, ref)) or (False, "list")
    res.check("all_to_all_single even/uneven splits, all_to_all", t_alltoall)

    def t_gather_scatter():
        for root in range(n):
            x = rnd((7,), torch.float32)
            a = [torch.empty(7) for _ in range(n)] if rank == root else None
            ref = [torch.empty(7) for _ in range(n)] if rank == root else None
            dist.gather(x, a, dst=root)
            dist.gather(x, ref, dst=root, group=gloo)
            if rank == root and not all(torch.equal(u, v) for u, v in zip(a, ref)):
                return False, "gather root %d" % root
            src = [rnd((5,), torch.int64) for _ in range(n)] if rank == root else None
            o, oref = torch.empty(5, dtype=torch.int64), torch.empty(5, dtype=torch.int64)
            dist.scatter(o, src, src=root)
            dist.scatter(oref, src, src=root, group=gloo)
            if not torch.equal(o, oref):
                return False, "scatter root %d" % root
        return True
    res.check("gather, scatter every root", t_gather_scatter)

    def t_sendrecv():
        nxt, prv = (rank + 1) % n, (rank - 1) % n
        # tags out of order: sent 1, 2, 3; received 3, 1, 2 (unexpected ones buffered)
        vals = {t: torch.full((t * 1000,), float(rank * 10 + t)) for t in (1, 2, 3)}
        sends = [dist.isend(vals[t], nxt, tag=t) for t in (1, 2, 3)]
        got = {}
        for t in (3, 1, 2):
            got[t] = torch.empty(t * 1000)
            dist.recv(got[t], prv, tag=t)
        for w in sends:
            w.wait()
        for t in (1, 2, 3):
            if not torch.equal(got[t], torch.full((t * 1000,), float(prv * 10 + t))):
                return False, "tag %d" % t
        # a message that arrives long before its receive is posted (rendezvous size)
        big = torch.arange(300000, dtype=torch.float32) + rank
        w = dist.isend(big, nxt, tag=9)
        time.sleep(0.3)
        r = torch.empty(300000)
        dist.recv(r, prv, tag=9)
        w.wait()
        if not torch.equal(r, torch.arange(300000, dtype=torch.float32) + prv):
            return False, "early send"
        # non-contiguous receive, int16
        x = torch.arange(12, dtype=torch.int16).view(3, 4) * (rank + 1)
        y = torch.empty(4, 3, dtype=torch.int16).t()
        ws = dist.isend(x, nxt, tag=5)
        dist.recv(y, prv, tag=5)
        ws.wait()
        return torch.equal(y, torch.arange(12, dtype=torch.int16).view(3, 4) * (prv + 1)) or (False, "noncontig")
    res.check("send/recv ring: tags out of order, early send, non-contiguous", t_sendrecv)

    def t_subgroup():
        members = list(range(0, n, 2)) if n > 2 else [0, 1]
        sub = dist.new_group(members, backend="gcoll")
        subg = dist.new_group(members, backend="gloo")
        if rank not in members:
            return True
        x = rnd((50,), torch.float32)
        a, ref = x.clone(), x.clone()
        dist.all_reduce(a, group=sub)
        dist.all_reduce(ref, group=subg)
        b = torch.tensor([rank])
        dist.broadcast(b, members[-1], group=sub)
        return (same(a, ref) and b.item() == members[-1]) or (False, "%s %s" % (a[:3], ref[:3]))
    res.check("new_group subgroup (only members call in)", t_subgroup)

    def t_async():
        x = rnd((1 << 18,), torch.float32)
        a = x.clone()
        w = dist.all_reduce(a, async_op=True)
        m = torch.randn(128, 128)
        for _ in range(5):
            m = m @ m.t() / 128  # compute while the collective runs
        fut = w.get_future()
        v = fut.wait()
        ok = w.is_completed() and w.is_success() and isinstance(v, list) and v[0] is not None
        ref = x.clone()
        dist.all_reduce(ref, group=gloo)
        ws = [dist.all_reduce(t, async_op=True) for t in [torch.ones(4) * i for i in range(4)]]
        ok2 = all(w.wait(timeout=datetime.timedelta(seconds=30)) for w in ws)
        return (ok and ok2 and same(v[0], ref) and same(a, ref)) or (False, "ok=%s ok2=%s" % (ok, ok2))
    res.check("async_op: future value, wait(timeout), overlap", t_async)

    def t_barrier():
        dist.barrier()
        return True
    res.check("barrier", t_barrier)

    res.report(prefix)
    dist.destroy_process_group()
    if os.environ.get("TORCH_GCOLL_DEBUG"):
        print("rank %d destroyed" % rank, file=sys.stderr, flush=True)


def worker_ddp(args):
    torch, dist = setup()
    sys.dont_write_bytecode = True  # the checkout stays clean
    sys.path.insert(0, os.path.join(HERE, "../../collectives/bindings/torch/examples"))
    from ddp_train import make_model, train
    from torch.nn.parallel import DistributedDataParallel as DDP
    gloo = dist.new_group(backend="gloo")
    res = Results(dist, gloo)
    rank = dist.get_rank()

    def t_ddp():
        torch.manual_seed(0)
        m1 = make_model()
        m2 = make_model()
        m2.load_state_dict(m1.state_dict())
        d1 = DDP(m1, process_group=dist.group.WORLD)  # gcoll
        d2 = DDP(m2, process_group=gloo)
        l1 = train(d1, steps=args.steps, seed=100 + rank)
        l2 = train(d2, steps=args.steps, seed=100 + rank)
        for (k, p1), p2 in zip(m1.named_parameters(), m2.parameters()):
            if not torch.allclose(p1, p2, rtol=1e-4, atol=1e-5):
                return False, "param %s differs by %g" % (k, (p1 - p2).abs().max())
        moved = any(not torch.equal(p, q) for p, q in zip(m1.parameters(), make_model_init(m1)))
        return (abs(l1 - l2) < 1e-3 and moved) or (False, "loss %g vs %g" % (l1, l2))

    init = {}

    def make_model_init(m):
        return init["p"]
    torch.manual_seed(0)
    init["p"] = [p.detach().clone() for p in make_model().parameters()]
    res.check("DDP %d steps: gcoll params == gloo params" % args.steps, t_ddp)
    res.report("%s n=%d" % (args.provider, dist.get_world_size()))
    # a DDP module still alive holds the group: destroy_process_group must
    # close gcoll's communicators all the same (torch_gcoll hooks it)
    keep = DDP(make_model(), process_group=dist.group.WORLD)
    be = dist.group.WORLD._get_backend(torch.device("cpu"))
    n = dist.get_world_size()
    dist.destroy_process_group()
    closed = "provider" not in be._transport()
    if rank == 0:
        print("%s - %s n=%d destroy_process_group closes gcoll's communicators, "
              "a DDP module alive" % ("ok" if closed else "not ok", args.provider, n))
    elif not closed:
        print("rank %d: communicators still open after destroy_process_group" % rank,
              file=sys.stderr, flush=True)
        os._exit(1)
    del keep
    # a normal interpreter exit from here (the launcher's timeout bounds it)


def worker_fail(args):
    scen = args.scenario
    if scen == "missing-device":
        sys.path.insert(0, os.environ.get("TORCH_GCOLL_PATH", "/build/prefix/lib/python3/dist-packages"))
        import torch
        import torch_gcoll
        try:
            torch_gcoll.empty_hbm(4, 4, dtype=torch.float32, device=7)
            print("RESULT noexc")
        except RuntimeError as e:
            print("RESULT exc %s" % str(e).splitlines()[0])
        return
    torch, dist = setup(timeout_s=args.timeout)
    rank = dist.get_rank()
    t0 = time.time()
    try:
        if scen == "killed":
            dist.all_reduce(torch.ones(10))  # everybody is up
            if rank == 1:
                os.kill(os.getpid(), 9)
            time.sleep(0.5)
            dist.all_reduce(torch.ones(1 << 16))
        elif scen == "timeout":
            if rank == 1:
                time.sleep(args.timeout + 3)  # silent past rank 0's timeout
                os._exit(0)
            dist.all_reduce(torch.ones(10))
        elif scen == "mismatch":
            dist.all_reduce(torch.ones(1000 if rank == 0 else 300000))
        elif scen == "band":
            dist.all_reduce(torch.ones(4, dtype=torch.int32), op=dist.ReduceOp.BAND)
        elif scen == "wait-timeout":
            if rank == 1:
                time.sleep(3)
            w = dist.all_reduce(torch.ones(4), async_op=True)
            try:
                w.wait(timeout=datetime.timedelta(milliseconds=300))
                if rank == 0:
                    print("RESULT noexc %.1f" % (time.time() - t0))
            except RuntimeError as e:
                if rank == 0:
                    print("RESULT exc %.1f %s" % (time.time() - t0, str(e).splitlines()[0]))
            w.wait()
            dist.destroy_process_group()
            return
        elif scen == "anysource":
            dist.recv(torch.empty(4))
        if rank == 0:
            print("RESULT noexc %.1f" % (time.time() - t0))
    except RuntimeError as e:
        if rank == 0:
            print("RESULT exc %.1f %s" % (time.time() - t0, str(e).splitlines()[0][:300]))
    sys.stdout.flush()
    if scen in ("band", "anysource"):
        dist.destroy_process_group()
    # else: exit with a failed group: must not hang either


def main_fail():
    # scenario, ranks, pg timeout, words expected in the message, bound (s)
    # on the time rank 0 took to raise (whole run for missing-device)
    cases = [
        ("killed", 2, 4, ["gcoll"], 10, "a killed rank raises on the survivor"),
        ("timeout", 2, 4, ["timeout"], 10, "a silent rank: the group's timeout raises"),
        ("mismatch", 2, 4, ["gcoll"], 10, "mismatched tensor size between ranks raises"),
        ("band", 2, 30, ["BAND"], 2, "ReduceOp.BAND refused with a clear error"),
        ("wait-timeout", 2, 30, ["300 ms"], 3, "Work.wait(timeout) raises when it passes"),
        ("anysource", 2, 30, ["source"], 2, "recv without a source refused"),
        ("missing-device", 1, 0, ["gaudi_nic device 7"], 30, "empty_hbm on a missing device"),
    ]
    print("TAP version 13")
    print("1..%d" % len(cases))
    for i, (scen, n, tmo, words, bound, desc) in enumerate(cases, 1):
        out, rcs, secs = launch(n, ["fail", "--scenario", scen, "--timeout", str(tmo)],
                                timeout=bound + 30)
        line = next((ln for ln in out.splitlines() if ln.startswith("RESULT ")), "")
        f = line.split()
        took = float(f[2]) if len(f) > 2 and f[2].replace(".", "").isdigit() else secs
        ok = line.startswith("RESULT exc") and all(w.lower() in line.lower() for w in words) \
            and took <= bound
        print("%s %d - %s (raised after %.1fs, bound %ds; run %.1fs)"
              % ("ok" if ok else "not ok", i, desc, took, bound, secs))
        print("# %s" % (line or "no result; output: " + out.strip()[-300:]))
        sys.stdout.flush()
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["ops", "ddp", "fail"])
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--provider", default="tcp")
    ap.add_argument("--ranks", default="2")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--scenario", default="")
    ap.add_argument("--timeout", type=int, default=60)
    argv = sys.argv[1:]
    if "--worker" in argv:
        argv.remove("--worker")
        args = ap.parse_args(argv)
        {"ops": worker_ops, "ddp": worker_ddp, "fail": worker_fail}[args.mode](args)
        # a normal interpreter exit: must not hang (the launcher's timeout)
        return 0
    args = ap.parse_args(argv)
    if args.mode == "fail":
        return main_fail()
    print("TAP version 13")
    status = 0
    n_ok = 0
    lines = []
    for n in [int(x) for x in args.ranks.split(",")]:
        out, rcs, secs = launch(n, argv, env_extra={"GCOLL_PROVIDER": args.provider})
        got = [ln for ln in out.splitlines() if ln.startswith(("ok", "not ok", "#"))]
        if not any(ln.startswith(("ok", "not ok")) for ln in got) or any(rcs):
            got.append("not ok - %s n=%d: ranks exited %s after %.0fs" % (args.provider, n, rcs, secs))
        lines += got
        lines.append("# %s n=%d: %.1fs" % (args.provider, n, secs))
        print("# %s n=%d done in %.1fs" % (args.provider, n, secs), flush=True)
    k = 0
    for ln in lines:
        if ln.startswith("ok") or ln.startswith("not ok"):
            k += 1
            word, rest = ("not ok", ln[7:]) if ln.startswith("not ok") else ("ok", ln[3:])
            rest = rest.lstrip("- ")
            print("%s %d - %s" % (word, k, rest))
            if word == "not ok":
                status = 1
            else:
                n_ok += 1
        else:
            print(ln)
        sys.stdout.flush()
    print("1..%d" % k)
    return status


if __name__ == "__main__":
    sys.exit(main())
