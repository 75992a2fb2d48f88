#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check that libgcoll's source files call each other only downward.

The library is built in layers (Documentation/collectives.md, "Layers"):
a file may call functions of its own layer or of lower ones, never of a
higher one, and no chain of calls between files may come back to where it
started.  The call graph is read from the built objects, not the sources,
so a call hidden behind a macro or an inline helper still counts: every
undefined symbol of an object file is an edge to the file whose object
defines it.

usage: layers.py OBJDIR [SRCDIR]
                               check the objects (*.o) in OBJDIR; with
                               SRCDIR, also that each file there includes
                               only the headers (gc_NAME.h) of its own
                               layer and lower ones
       layers.py --selftest    show the check failing and passing on
                               made-up graphs
Prints TAP (each offending pair a "# " line before its failed point);
exits 1 on an offence, 0 when the graph is clean.
"""
import os
import re
import subprocess
import sys

# Lowest first.  Files on one line form one layer: they may call each
# other, as long as the calls make no cycle.
LAYERS = [
    ["log", "reduce",           # logging, errors, clocks; reduction kernels
     "util", "half"],           # (their headers gc_util.h, gc_half.h)
    ["bootstrap"],              # the TCP rendezvous of a communicator's init
    ["mr", "transport"],        # registrations; fabric, endpoints, rails
    ["xfer"],                   # point-to-point transfers and their progress
    ["stage", "sched"],         # dma-buf staging; schedules, requests, groups
    ["fast"],                   # the shared-memory fast path
    ["algo"],                   # the collective algorithms, the road choice
    ["registry"],               # live communicators, handle checks
    ["comm", "coll", "mem"],    # the public API
]

DEFINED = set("TDBRVWGS")   # text, data, bss, read-only, weak, small data


def layer_of():
    return {f: i for i, names in enumerate(LAYERS) for f in names}


def unit(obj):
    """src_sched.c.o (meson's name for src/sched.c) -> sched"""
    name = os.path.basename(obj)
    for suffix in (".o", ".c"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name[4:] if name.startswith("src_") else name


def parse_nm(text):
    """nm output of one object -> (defined symbols, undefined symbols)"""
    defs, undefs = set(), set()
    for line in text.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] in ("U", "w"):
            undefs.add(f[1])
        elif len(f) == 3 and f[1] in DEFINED:
            defs.add(f[2])
    return defs, undefs


def graph(nm_by_unit):
    """{unit: nm text} -> {unit: {callee unit: [symbols]}}"""
    owner, undefs = {}, {}
    for u, text in nm_by_unit.items():
        d, und = parse_nm(text)
        undefs[u] = und
        for s in d:
            owner[s] = u
    g = {u: {} for u in nm_by_unit}
    for u, und in undefs.items():
        for s in sorted(und):
            v = owner.get(s)
            if v and v != u:
                g[u].setdefault(v, []).append(s)
    return g


def cycles(g):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def shortest_loop(g, comp):
    """One shortest cycle through comp's first file: [a, b, ..., a]."""
    start, inside = comp[0], set(comp)
    prev, todo = {}, [start]
    while todo:
        nxt = []
        for u in todo:
            for v in sorted(g[u]):
                if v == start:
                    path = [u]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return path[::-1] + [start]
                if v in inside and v not in prev:
                    prev[v] = u
                    nxt.append(v)
        todo = nxt
    return [start, start]


def check(g, out=sys.stdout):
    """Print every offence; return how many there were."""
    lv = layer_of()
    bad = 0
    for u in sorted(g):
        if u not in lv:
            print(f"layers: {u}.c is in no layer (add it to LAYERS in layers.py)", file=out)
            bad += 1
    for u in sorted(g):
        for v, syms in sorted(g[u].items()):
            if u in lv and v in lv and lv[v] > lv[u]:
                print(f"layers: upward call {u}.c -> {v}.c ({', '.join(syms[:4])}"
                      f"{', ...' if len(syms) > 4 else ''}): layer {lv[u]} calls layer {lv[v]}",
                      file=out)
                bad += 1
    for comp in cycles(g):
        loop = shortest_loop(g, comp)
        steps = [f"{u}.c -> {v}.c ({g[u][v][0]})" for u, v in zip(loop, loop[1:])]
        print(f"layers: cycle {' -> '.join(f + '.c' for f in loop)}: {'; '.join(steps)}"
              f" (files calling each other round: {', '.join(c + '.c' for c in comp)})",
              file=out)
        bad += 1
    return bad


def unit_of_source(name):
    """sched.c, gc_sched.h -> sched"""
    base = name.rsplit(".", 1)[0]
    return base[3:] if base.startswith("gc_") else base


def check_includes(srcdir, out=sys.stdout):
    """Print every include of a higher layer's header; return how many."""
    lv = layer_of()
    bad = 0
    for name in sorted(os.listdir(srcdir)):
        if not (name.endswith(".c") or (name.startswith("gc_") and name.endswith(".h"))):
            continue
        u = unit_of_source(name)
        with open(os.path.join(srcdir, name), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                m = re.match(r'\s*#\s*include\s+"(gc_\w+\.h)"', line)
                if not m:
                    continue
                h = unit_of_source(m.group(1))
                if u not in lv or h not in lv:
                    what = name if u not in lv else m.group(1)
                    print(f"layers: {name}:{n}: {what} is in no layer (one header a layer: "
                          f"add it to LAYERS in layers.py)", file=out)
                    bad += 1
                elif lv[h] > lv[u]:
                    print(f"layers: {name}:{n}: includes {m.group(1)} of layer {lv[h]} "
                          f"from layer {lv[u]}", file=out)
                    bad += 1
    return bad


def nm_dir(objdir):
    objs = sorted(f for f in os.listdir(objdir) if f.endswith(".o"))
    if not objs:
        sys.exit(f"layers: no object files in {objdir}")
    res = {}
    for o in objs:
        p = subprocess.run(["nm", os.path.join(objdir, o)], capture_output=True, text=True)
        if p.returncode:
            sys.exit(f"layers: nm {o}: {p.stderr.strip()}")
        res[unit(o)] = p.stdout
    return res


def fake(defs_calls):
    """{unit: (defined, called)} -> {unit: nm text}, as nm prints it"""
    return {u: "".join(f"0000000000000000 T {s}\n" for s in d) +
            "".join(f"                 U {s}\n" for s in c)
            for u, (d, c) in defs_calls.items()}


def selftest():
    import io
    cases = [
        ("clean", 0, {"log": (["gc_log"], []),
                      "sched": (["gc_submit"], ["gc_log", "memcpy"]),
                      "algo": (["gc_algo_x"], ["gc_submit", "gc_log"]),
                      "coll": (["gcoll_x"], ["gc_algo_x"]),
                      "comm": (["gcoll_y"], ["gc_algo_x"])}),
        ("upward call", 1, {"log": (["gc_log"], []),
                            "sched": (["gc_submit"], ["gc_log", "gc_fast_progress"]),
                            "fast": (["gc_fast_progress"], ["gc_log"])}),
        ("cycle in a layer", 1, {"comm": (["gcoll_split"], ["gcoll_allgather"]),
                                 "coll": (["gcoll_allgather"], ["gcoll_split"])}),
        ("cycle of three", 1, {"comm": (["gcoll_a"], ["gcoll_b"]),
                               "coll": (["gcoll_b"], ["gcoll_c"]),
                               "mem": (["gcoll_c"], ["gcoll_a"])}),
        ("upward call and cycle", 2, {"algo": (["gc_algo_ar"], ["gc_fast_ad"]),
                                      "fast": (["gc_fast_ad"], ["gc_algo_ar"])}),
        ("file in no layer", 1, {"log": (["gc_log"], []),
                                 "extra": (["gc_x"], ["gc_log"])}),
    ]
    print("TAP version 13")
    print(f"1..{len(cases) + 1}")
    failed = 0
    for n, (name, want, dc) in enumerate(cases, 1):
        buf = io.StringIO()
        got = check(graph(fake(dc)), buf)
        ok = got == want
        print(f"{'ok' if ok else 'not ok'} {n} - selftest: {name}: {got} offence(s), "
              f"want {want}")
        for line in buf.getvalue().splitlines():
            print("# " + line)
        failed += not ok
    assert unit("libgcoll.so.0.1.0.p/src_sched.c.o") == "sched"
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for name, text in (("sched.c", '#include "gc_sched.h"\n#include "gc_xfer.h"\n'),
                           ("gc_sched.h", '#include "gc_xfer.h"\n')):
            with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                f.write(text)
        buf = io.StringIO()
        got = check_includes(d, buf)
        with open(os.path.join(d, "xfer.c"), "w", encoding="utf-8") as f:
            f.write('#include "gc_fast.h"\n')
        got2 = check_includes(d, buf)
    ok = got == 0 and got2 == 1
    print(f"{'ok' if ok else 'not ok'} {len(cases) + 1} - selftest: includes: {got} then "
          f"{got2} offence(s), want 0 then 1")
    for line in buf.getvalue().splitlines():
        print("# " + line)
    failed += not ok
    return failed


def main(argv):
    if len(argv) == 2 and argv[1] == "--selftest":
        return 1 if selftest() else 0
    if len(argv) not in (2, 3) or argv[1].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    import io
    g = graph(nm_dir(argv[1]))
    print("TAP version 13")
    print(f"1..{2 if len(argv) == 3 else 1}")
    buf = io.StringIO()
    bad = check(g, buf)
    for line in buf.getvalue().splitlines():
        print("# " + line)
    print(f"{'not ok' if bad else 'ok'} 1 - the calls between libgcoll's {len(g)} files "
          f"({sum(len(e) for e in g.values())} file-to-file edges): none upward, no cycle, "
          f"every file in a layer ({bad} offence(s))")
    if len(argv) == 3:
        buf = io.StringIO()
        inc = check_includes(argv[2], buf)
        for line in buf.getvalue().splitlines():
            print("# " + line)
        print(f"{'not ok' if inc else 'ok'} 2 - no file includes a higher layer's header "
              f"({inc} offence(s))")
        bad += inc
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
