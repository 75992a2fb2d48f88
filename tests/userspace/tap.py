# SPDX-License-Identifier: GPL-2.0
"""TAP points of the userspace host checks (man_check.py, meson_tests.py)."""

n = 0
failed = 0


def point(good, desc, why=()):
    """One point; a failed one is followed by its reasons as diagnostics."""
    global n, failed
    n += 1
    print(("ok" if good else "not ok") + f" {n} - {desc}")
    if not good:
        failed += 1
        for line in why:
            print(f"# {line}")


def plan():
    """Print the plan after the points; the exit status of the check."""
    print(f"1..{n}")
    return 1 if failed else 0
