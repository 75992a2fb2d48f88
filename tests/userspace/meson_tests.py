#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""meson_tests.py - the Meson projects' host tests have one registry.

A Meson project registers its host tests with test() in its meson.build,
and make check runs them through one line of a host list, "meson PREFIX
BUILDDIR" (tools/testenv/run-tests.sh, meson-list.py).  Checks, from
`meson introspect --tests` of the ASan+UBSan builds that `make user`
leaves in /build:

- each project's list (tests/host.d/collectives.list, accel.list) has
  that line, and no line of any host list runs a program of the project's
  build otherwise (a second registration that could drift);
- meson-list.py turns the registrations into one list line each, with
  the program, arguments, environment and time limit Meson has;
- every test is in a suite; every test program built from
  collectives/tests/test_*.c is registered;
- the projects whose programs need a device (tests/accel, tests/rdma)
  register none;
- `meson test` itself runs: hl-thunk's unit suite and libgcoll's "half"
  test (a second each).

Output: TAP.
"""
import json
import os
import shlex
import subprocess
import sys

from tap import plan, point

SRC = os.environ.get("GAUDI_NIC_SRC", "/src")
BUILD = os.environ.get("GAUDI_NIC_BUILD", "/build")
# project build dir -> (the host list that runs its tests, their prefix)
PROJECTS = {
    "hl-thunk": ("accel.list", "accel-hlthunk-"),
    "collectives": ("collectives.list", "coll-"),
}
DEVICE_ONLY = ["tests-accel", "tests-rdma"]


def introspect(builddir):
    out = subprocess.run(["meson", "introspect", "--tests", builddir],
                         capture_output=True, text=True)
    if out.returncode:
        return None, out.stderr.strip()
    return json.loads(out.stdout), ""


def list_lines(builddir):
    """(list, line) of the lines of every host list that run a program
    of builddir, or a script that takes one, and the "meson" lines that
    name it."""
    res = []
    ldir = os.path.join(SRC, "tests/host.d")
    for lf in sorted(os.listdir(ldir)):
        if not lf.endswith(".list"):
            continue
        with open(os.path.join(ldir, lf)) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#") or line == "wait":
                    continue
                words = shlex.split(line.lstrip("&"))
                if builddir in [w.rstrip("/") for w in words] or any(
                        w.split("=", 1)[-1].startswith(builddir + "/") for w in words):
                    res.append((lf, line))
    return res


def expand(prefix, builddir):
    out = subprocess.run(["python3", os.path.join(SRC, "tools/testenv/meson-list.py"),
                          prefix, builddir], capture_output=True, text=True)
    return out.stdout.splitlines()


def parse(line):
    """(name, timeout, env, cmd) of a list line, read as run-tests.sh and
    bash read it."""
    words = shlex.split(line)
    name, tmo, rest = words[0], int(words[1]), words[2:]
    env = {}
    while rest and "=" in rest[0] and not rest[0].startswith("/"):
        k, v = rest.pop(0).split("=", 1)
        env[k] = v
    return name, tmo, env, rest


def same(line, prefix, t):
    return parse(line) == (prefix + t["name"], t["timeout"], t.get("env", {}), t["cmd"])


def main():
    for proj, (listfile, prefix) in PROJECTS.items():
        builddir = os.path.join(BUILD, proj)
        tests, err = introspect(builddir)
        point(bool(tests), f"meson introspect --tests {builddir}: "
              f"{len(tests or [])} tests registered", [err])
        if not tests:
            continue
        meson_line = f"meson {prefix} {builddir}"
        lines = list_lines(builddir)
        point(lines == [(listfile, meson_line)],
              f"{proj}: its tests run from {listfile}'s line \"{meson_line}\" "
              f"and no other host-list line",
              [f"{lf}: {l}" for lf, l in lines])
        got = expand(prefix, builddir)
        point(len(got) == len(tests) and all(same(g, prefix, t) for g, t in zip(got, tests)),
              f"{proj}: meson-list.py gives each of the {len(tests)} registrations as "
              f"one list line, {prefix}NAME with Meson's program, arguments, "
              f"environment and time limit",
              [f"line: {g}" for g in got] +
              [f"registered: {t['name']}: {' '.join(t['cmd'])} env {t.get('env', {})} "
               f"timeout {t['timeout']}" for t in tests])
        # a test without suite: is in the suite named after its project
        # only ("gcoll"); one with suite S: "gcoll:S"
        nosuite = [t["name"] for t in tests if not [s for s in t["suite"] if ":" in s]]
        point(not nosuite, f"{proj}: every test is in a suite "
              f"({' '.join(sorted({s for t in tests for s in t['suite']}))})",
              [f"no suite: {' '.join(nosuite)}"])
        if proj == "collectives":
            srcs = sorted(f[:-2] for f in os.listdir(os.path.join(SRC, "collectives/tests"))
                          if f.startswith("test_") and f.endswith(".c"))
            used = {os.path.basename(t["cmd"][0]) for t in tests}
            missing = [s for s in srcs if s not in used]
            point(not missing, f"collectives: every tests/test_*.c program is registered "
                  f"({len(srcs)})", [f"not registered: {' '.join(missing)}"])
    for proj in DEVICE_ONLY:
        builddir = os.path.join(BUILD, proj)
        tests, err = introspect(builddir)
        point(tests == [], f"{proj}: its programs need a device: no test() registered",
              [err] if tests is None else [t["name"] for t in tests])
    for proj, args in (("hl-thunk", ["--suite", "unit"]), ("collectives", ["half"])):
        out = subprocess.run(["meson", "test", "-C", os.path.join(BUILD, proj),
                              "--no-rebuild", "--print-errorlogs"] + args,
                             capture_output=True, text=True)
        summary = [l for l in out.stdout.splitlines() if l.startswith(("Ok:", "Fail:"))]
        point(out.returncode == 0 and "Ok:" in out.stdout,
              f"meson test -C build/{proj} {' '.join(args)}: {' '.join(summary)}",
              (out.stdout + out.stderr).splitlines()[-20:])
    return plan()



if __name__ == "__main__":
    sys.exit(main())
