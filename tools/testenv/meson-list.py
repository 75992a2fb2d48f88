#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""meson-list.py PREFIX BUILDDIR - a Meson project's registered tests as
lines of a run list (tools/testenv/run-tests.sh).

A list line "meson PREFIX BUILDDIR" stands for every test() the project
built in BUILDDIR registers, so a Meson project's host tests have one
registry, its meson.build: `meson test -C BUILDDIR` and make check run
the same tests with the same programs, arguments, environment and time
limits.  Each becomes "PREFIXNAME TIMEOUT ENV=VALUE... PROGRAM ARGS...",
in the order of registration, words shell-quoted.  If the project cannot
be introspected (not built, or Meson fails), prints one test that fails
and says why, so that a missing build is never an empty, passing list.
"""
import json
import shlex
import subprocess
import sys


def failing(prefix, why):
    msg = shlex.quote(f"not ok 1 - {why}")
    return f"{prefix}meson 10 echo {msg}; exit 1"


def main():
    if len(sys.argv) != 3:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    prefix, builddir = sys.argv[1], sys.argv[2]
    out = subprocess.run(["meson", "introspect", "--tests", builddir],
                         capture_output=True, text=True)
    try:
        tests = json.loads(out.stdout) if out.returncode == 0 else None
    except json.JSONDecodeError:
        tests = None
    if tests is None:
        said = (out.stderr + out.stdout).strip().splitlines()
        print(failing(prefix, f"{builddir} is not a Meson build with tests "
                      f"(meson introspect --tests: {said[-1] if said else 'failed'}); "
                      f"make user builds it"))
        return 0
    if not tests:
        print(failing(prefix, f"{builddir} registers no test()"))
        return 0
    for t in tests:
        env = [f"{k}={shlex.quote(v)}" for k, v in sorted(t.get("env", {}).items())]
        cmd = [shlex.quote(w) for w in t["cmd"]]
        print(f"{prefix}{t['name']} {t['timeout']} " + " ".join(env + cmd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
