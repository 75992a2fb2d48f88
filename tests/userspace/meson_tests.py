#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""meson_tests.py - the Meson projects register their host tests with test().

Checks, from `meson introspect --tests` of the ASan+UBSan builds that
`make user` leaves in /build (no test is run twice: make check runs the
long ones from tests/host.d/*.list):

- every host-list line that runs a program of a Meson project
  (tests/host.d/collectives.list, accel.list) is a registered test with
  the same program, arguments, environment and time limit, in a suite;
  and every registered test is such a line, so `meson test` and make
  check run the same set;
- every test program built from collectives/tests/test_*.c is registered;
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
# project build dir -> the host lists that run its programs
PROJECTS = {
    "hl-thunk": ["accel.list"],
    "collectives": ["collectives.list"],
}
DEVICE_ONLY = ["tests-accel", "tests-rdma"]


def introspect(builddir):
    out = subprocess.run(["meson", "introspect", "--tests", builddir],
                         capture_output=True, text=True)
    if out.returncode:
        return None, out.stderr.strip()
    return json.loads(out.stdout), ""


def list_lines(listfile, builddir):
    """(name, timeout, env, program, args) of the lines that run a program
    of builddir or a script of the project's source that takes one."""
    res = []
    with open(os.path.join(SRC, "tests/host.d", listfile)) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or line == "wait":
                continue
            name, tmo, cmd = line.lstrip("&").split(None, 2)
            words = shlex.split(cmd)
            env = {}
            while words and "=" in words[0] and not words[0].startswith("/"):
                k, v = words.pop(0).split("=", 1)
                env[k] = v
            if not words:
                continue
            prog = words[0]
            mine = prog.startswith(builddir + "/") or any(
                a.startswith(builddir + "/") for a in words[1:])
            if not mine or "python3" in prog:
                continue
            res.append((name, int(tmo), env, prog, words[1:]))
    return res


def same(line, t):
    _, tmo, env, prog, args = line
    cmd = t["cmd"]
    return (os.path.basename(cmd[0]) == os.path.basename(prog)
            and cmd[1:] == args
            and all(t.get("env", {}).get(k) == v for k, v in env.items())
            and t["timeout"] == tmo)


def main():
    for proj, lists in PROJECTS.items():
        builddir = os.path.join(BUILD, proj)
        tests, err = introspect(builddir)
        point(tests is not None, f"meson introspect --tests {builddir}", [err])
        if tests is None:
            continue
        lines = [l for lf in lists for l in list_lines(lf, builddir)]
        matched = set()
        for line in lines:
            hits = [t for t in tests if same(line, t)]
            name = line[0]
            point(bool(hits),
                  f"{proj}: host test {name} is registered with test() "
                  f"(same program, arguments, environment, timeout {line[1]} s)"
                  + (f" as {hits[0]['name']}" if hits else ""),
                  [f"list: {' '.join(f'{k}={v}' for k, v in line[2].items())} "
                   f"{line[3]} {' '.join(line[4])} (timeout {line[1]})"] +
                  [f"registered: {t['name']}: {' '.join(t['cmd'])} "
                   f"env {t.get('env', {})} timeout {t['timeout']}" for t in tests])
            for t in hits:
                matched.add(t["name"])
        extra = [t["name"] for t in tests if t["name"] not in matched]
        point(not extra, f"{proj}: every registered test is a line of "
              f"{', '.join(lists)} ({len(tests)} tests)",
              [f"not in the lists: {' '.join(extra)}"])
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
