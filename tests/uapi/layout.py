#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the layout of every struct of a uAPI header on i386, x32 and x86-64.

usage: layout.py HEADER [INCLUDE_DIR...]

Every struct's size and every field's offset (nested union/struct members
included) are compiled into a table for each ABI (gcc -m32 / -mx32 / -m64,
compile only, nothing is run) and the tables are compared.  Also checks
that each struct is a multiple of 8 bytes.  Prints TAP.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile

ABIS = [("i386", "-m32"), ("x32", "-mx32"), ("x86-64", "-m64")]


def parse(text):
    """Yield (struct_name, [field paths]) for each named top-level struct."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
    toks = re.findall(r"[A-Za-z_]\w*|\[[^\]]*\]|[{};]", text)
    out, i = [], 0
    while i < len(toks):
        if toks[i] == "struct" and i + 2 < len(toks) and toks[i + 2] == "{":
            name, i = toks[i + 1], i + 3
            fields, stack, decl, closed, k = [], [""], [], "", 0
            while stack:
                t = toks[i]
                i += 1
                if t == "{":
                    # a nested aggregate: its members are recorded under a
                    # placeholder of their own, named (or dropped, if the
                    # aggregate is anonymous) at its "}"
                    stack.append("\0%d\0" % k)
                    k += 1
                    decl = []
                elif t == "}":
                    closed = stack.pop()
                    decl = ["}"]
                elif t == ";":
                    if decl and decl[0] == "}" and len(decl) > 1:
                        # "} name;" closes a named nested aggregate
                        prefix = ".".join(p for p in stack if p)
                        fields[:] = [f.replace(closed, decl[1]) for f in fields]
                        fields.append((prefix + "." if prefix else "") + decl[1])
                    elif decl == ["}"]:
                        # "};" closes an anonymous one: its members are
                        # members of the enclosing aggregate
                        fields[:] = [f.replace(closed + ".", "") for f in fields]
                    elif decl and decl[0] != "}":
                        names = [d for d in decl if not d.startswith("[")]
                        member = names[-1]
                        prefix = ".".join(p for p in stack if p != "")
                        fields.append((prefix + "." if prefix else "") + member)
                    decl = []
                else:
                    decl.append(t)
            # i now points past the final "}"; skip "...;"
            out.append((name, fields))
        else:
            i += 1
    return out


def table(header, incs, structs, flag, tmp):
    src = os.path.join(tmp, "layout.c")
    with open(src, "w") as f:
        f.write("#include <stddef.h>\n#include \"%s\"\n" % os.path.abspath(header))
        f.write("const unsigned long long gn_layout[] = {\n")
        for name, fields in structs:
            f.write("\tsizeof(struct %s),\n" % name)
            for fld in fields:
                f.write("\toffsetof(struct %s, %s),\n" % (name, fld))
                f.write("\tsizeof(((struct %s *)0)->%s),\n" % (name, fld))
        f.write("};\n")
    obj = os.path.join(tmp, "layout%s.o" % flag)
    blob = obj + ".bin"
    cmd = ["gcc", flag, "-std=gnu11", "-O0", "-c", src, "-o", obj]
    cmd += ["-I" + d for d in incs]
    subprocess.run(cmd, check=True)
    subprocess.run(["objcopy", "-O", "binary", "-j", ".rodata", obj, blob], check=True)
    data = open(blob, "rb").read()
    n = len(data) // 8
    return list(struct.unpack("<%dQ" % n, data[: n * 8]))


SELFTEST = """
#include <linux/types.h>
struct gn_bad_hole { __u32 a; __u64 b; };
struct gn_bad_tail { __aligned_u64 a; __u32 b; };
"""


def selftest():
    """The checker must notice an i386 hole and a missing tail pad."""
    with tempfile.TemporaryDirectory() as tmp:
        hdr = os.path.join(tmp, "bad.h")
        open(hdr, "w").write(SELFTEST)
        structs = parse(SELFTEST)
        tabs = [table(hdr, [], structs, flag, tmp) for _, flag in ABIS]
    # table: size, (offset, size) per field, for each struct
    hole = len({t[3] for t in tabs}) > 1          # offset of gn_bad_hole.b
    x86_64 = tabs[2]
    tail = x86_64[5] != x86_64[8] + x86_64[9]     # sizeof vs end of .b
    print("%s 1 - checker detects a 32-bit hole (u32 before u64)" % ("ok" if hole else "not ok"))
    print("%s 2 - checker detects implicit tail padding" % ("ok" if tail else "not ok"))
    print("1..2")
    return 0 if hole and tail else 1


def main():
    if sys.argv[1] == "--selftest":
        return selftest()
    header, incs = sys.argv[1], sys.argv[2:]
    structs = parse(open(header).read())
    n = 0
    fails = 0

    def ok(cond, desc):
        nonlocal n, fails
        n += 1
        fails += not cond
        print("%s %d - %s" % ("ok" if cond else "not ok", n, desc))

    ok(len(structs) > 0, "%s declares %d structs" % (os.path.basename(header), len(structs)))
    with tempfile.TemporaryDirectory() as tmp:
        tabs = {}
        for abi, flag in ABIS:
            try:
                tabs[abi] = table(header, incs, structs, flag, tmp)
                ok(True, "header compiles for %s (%s)" % (abi, flag))
            except subprocess.CalledProcessError:
                ok(False, "header compiles for %s (%s)" % (abi, flag))
        if len(tabs) != len(ABIS):
            print("1..%d" % n)
            return 1
        k = 0
        for name, fields in structs:
            vals = {abi: tabs[abi][k] for abi in tabs}
            size = vals["x86-64"]
            ok(len(set(vals.values())) == 1 and size % 8 == 0,
               "struct %s: size %s, multiple of 8" % (name, "/".join(str(vals[a]) for a, _ in ABIS)))
            k += 1
            bad, top = [], []
            for fld in fields:
                offs = [tabs[a][k] for a, _ in ABIS]
                if len(set(offs)) != 1:
                    bad.append("%s %s" % (fld, "/".join(map(str, offs))))
                if "." not in fld:
                    top.append((offs[2], tabs["x86-64"][k + 1], fld))
                k += 2
            ok(not bad, "struct %s: %d field offsets identical on all ABIs%s"
               % (name, len(fields), (" (differ: " + ", ".join(bad) + ")") if bad else ""))
            holes, end = [], 0
            # members of an anonymous union overlap: only a gap is a hole
            for off, sz, fld in sorted(top):
                if off > end:
                    holes.append("before %s" % fld)
                end = max(end, off + sz)
            if end != size:
                holes.append("%d bytes at the end" % (size - end))
            ok(not holes, "struct %s: no implicit padding%s"
               % (name, (" (" + ", ".join(holes) + ")") if holes else ""))
    print("1..%d" % n)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
