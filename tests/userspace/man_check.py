#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""man_check.py - the man pages of the libraries are clean and complete.

For gcoll(3), hlthunk(3) and gaudi(7):
- groff (-man -ww -z) reports no warning and no error;
- a library's page has every function its public header declares both in
  its SYNOPSIS (as a prototype, "name(") and in the text after it
  (described, as "name ()" or "\\fBname\\fR");
- a self-test: a header with one more function fails the check.

Output: TAP.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tap import plan, point

SRC = os.environ.get("GAUDI_NIC_SRC", "/src")
PAGES = [
    # page, header whose functions it must document (or None), prefix
    ("collectives/man/gcoll.3", "collectives/include/gcoll.h", "gcoll_"),
    ("hl-thunk/man/hlthunk.3", "hl-thunk/include/hlthunk.h", "hlthunk_"),
    ("rdma-core/providers/gaudi/man/gaudi.7", None, None),
]


def functions(header_text, prefix):
    """Names of the functions a C header declares (comments removed)."""
    text = re.sub(r"/\*.*?\*/", " ", header_text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
    return sorted(set(re.findall(r"\b(" + prefix + r"\w+)\s*\(", text)))


def missing(page_text, names):
    """[(name, what is missing)] for the names a page does not document."""
    m = re.search(r"^\.SH SYNOPSIS\n(.*?)^\.SH ", page_text, flags=re.S | re.M)
    synopsis = m.group(1) if m else ""
    rest = page_text[m.end():] if m else page_text
    res = []
    for name in names:
        # .BI "int name(type " arg ...: the name right before "("
        if not re.search(r"\b" + name + r"\(", synopsis):
            res.append((name, "no prototype in SYNOPSIS"))
        if not re.search(r"(\.BR? " + name + r" \(\))|(\\fB" + name + r"\\f[RP])", rest):
            res.append((name, "not described after SYNOPSIS"))
    return res


def lint(path):
    """groff's warnings and errors about a page (empty: clean)."""
    out = subprocess.run(["groff", "-man", "-ww", "-z", path],
                         capture_output=True, text=True)
    msgs = out.stderr.strip().splitlines()
    if out.returncode and not msgs:
        msgs = [f"groff exited with status {out.returncode}"]
    return msgs


def main():
    have_groff = shutil.which("groff") is not None
    for page, header, prefix in PAGES:
        path = os.path.join(SRC, page)
        name = os.path.basename(page)
        if not os.path.exists(path):
            point(False, f"{name}: {page} exists")
            continue
        if have_groff:
            msgs = lint(path)
            point(not msgs, f"{name}: groff -man -ww -z reports nothing", msgs)
        else:
            point(False, f"{name}: groff -man -ww -z reports nothing",
                  ["groff is not installed (tools/testenv/packages.txt: groff-base)"])
        if header:
            with open(os.path.join(SRC, header)) as f:
                names = functions(f.read(), prefix)
            with open(path) as f:
                text = f.read()
            gaps = missing(text, names)
            point(len(names) > 5 and not gaps,
                  f"{name}: documents all {len(names)} functions of {header}",
                  [f"{fn}: {what}" for fn, what in gaps])

    # self-test: the checks can fail
    with open(os.path.join(SRC, "collectives/include/gcoll.h")) as f:
        hdr = f.read()
    with open(os.path.join(SRC, "collectives/man/gcoll.3")) as f:
        text = f.read()
    hdr2 = hdr.replace("#ifdef __cplusplus\n}", "int gcoll_not_documented(int x);\n#ifdef __cplusplus\n}")
    gaps = missing(text, functions(hdr2, "gcoll_"))
    point([g[0] for g in gaps] == ["gcoll_not_documented"] * 2,
          "self-test: a function added to gcoll.h and not to gcoll.3 is reported",
          [str(gaps)])
    text2 = re.sub(r"\.BR gcoll_barrier \(\)", "gcoll_barrier", text)
    gaps = missing(text2, functions(hdr, "gcoll_"))
    point(gaps == [("gcoll_barrier", "not described after SYNOPSIS")],
          "self-test: a function listed in SYNOPSIS only is reported", [str(gaps)])
    if have_groff:
        with tempfile.NamedTemporaryFile("w", suffix=".3") as bad:
            bad.write(text.replace(".SH DESCRIPTION", ".SH DESCRIPTION\n.XY\n\\fBunclosed font\n"
                                   ".BR gcoll_send\\(\n", 1))
            bad.flush()
            point(bool(lint(bad.name)), "self-test: groff reports an unknown macro")
    return plan()


if __name__ == "__main__":
    sys.exit(main())
