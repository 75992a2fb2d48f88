#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""size.py - no source file of the product over 1,200 lines, no function
over 120, as KTAP (one test per file).

The product is the kernel drivers and the userspace libraries (the
provider, hl-thunk, libgcoll and its PyTorch backend).  Tests and tools are
not checked.  In C, a function is a body that opens with "{" alone at
column 0 and closes with "}" alone at column 0 (Linux style); data tables
("... = {") are not functions and are not counted.  The C++ of the PyTorch
backend puts its braces K&R style: there a function runs from a signature
that starts at column 0 to the next "}" alone at column 0 (member functions
defined inside a class body are not measured).

  size.py [--root DIR]   check the tree's files (from git ls-files)
  size.py --selftest     prove a long file and a long function fail
"""
import os
import subprocess
import sys
import tempfile

MAX_FILE = 1200
MAX_FUNC = 120
PRODUCT = ['drivers/*.c', 'drivers/*.h', 'include/*.h',
           'rdma-core/providers/gaudi/*.c', 'rdma-core/providers/gaudi/*.h',
           'hl-thunk/lib/*.c', 'hl-thunk/include/*.h',
           'collectives/src/*.c', 'collectives/src/*.h',
           'collectives/include/*.h',
           'collectives/bindings/torch/csrc/*.cpp',
           'collectives/bindings/torch/csrc/*.hpp']
CXX = ('.cpp', '.hpp')


def long_functions(lines):
    """(first line, length, name line) of each function over MAX_FUNC."""
    out, start = [], None
    for i, line in enumerate(lines):
        if line == '{':
            start = i
        elif line == '}' and start is not None:
            n = i - start + 1
            j = start - 1
            while j > 0 and '(' not in lines[j]:
                j -= 1
            if n > MAX_FUNC:
                out.append((j + 1, n, lines[j].strip()))
            start = None
    return out


def long_functions_knr(lines):
    """The same for K&R braces (C++): a signature at column 0, then the
    body up to the next "}" alone at column 0."""
    out, start = [], None
    for i, line in enumerate(lines):
        if not line or line[0].isspace() or line.startswith(('#', '//', '/*', '*')):
            continue
        if line == '}':
            if start is not None and i - start + 1 > MAX_FUNC:
                out.append((start + 1, i - start + 1, lines[start].strip()))
            start = None
        elif line.startswith('}'):
            start = None          # "};", "}  // namespace"
        elif '(' in line and not line.startswith(('namespace', 'class', 'struct')):
            start = i
    return out


def problems(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = f.read().split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    msgs = []
    if len(lines) > MAX_FILE:
        msgs.append(f'{path}: {len(lines)} lines, over {MAX_FILE}: '
                    'split it by role')
    finder = long_functions_knr if path.endswith(CXX) else long_functions
    for at, n, name in finder(lines):
        msgs.append(f'{path}:{at}: function of {n} lines, over '
                    f'{MAX_FUNC}: {name}')
    return msgs


def check(files):
    print('TAP version 13')
    print(f'1..{len(files)}')
    bad = 0
    for i, path in enumerate(files, 1):
        msgs = problems(path)
        for m in msgs:
            print(f'# {m}')
        print(f'{"not ok" if msgs else "ok"} {i} size {path}')
        bad += bool(msgs)
    print(f'# {len(files) - bad} passed, {bad} failed')
    return 1 if bad else 0


def selftest():
    ok = True
    with tempfile.TemporaryDirectory() as d:
        cases = {
            'short.c': ('int f(void)\n{\n' + '\tx();\n' * 10 + '}\n', 0),
            'longfn.c': ('int f(void)\n{\n' + '\tx();\n' * MAX_FUNC +
                         '}\n', 1),
            'table.c': ('static const int t[] = {\n' + '\t1,\n' * 300 +
                        '};\n', 0),
            'longfile.c': ('int a;\n' * (MAX_FILE + 1), 1),
            'short.cpp': ('namespace x {\nint f() {\n' + '  x();\n' * 10 +
                          '}\n}  // namespace x\n', 0),
            'longfn.cpp': ('namespace x {\nvoid C::f(int a,\n'
                           '           int b) {\n' + '  x();\n' * MAX_FUNC +
                           '}\n}  // namespace x\n', 1),
            'class.cpp': ('class C {\n public:\n' + '  int a;\n' * 300 +
                          '};\n', 0),
        }
        for name, (text, want) in cases.items():
            path = os.path.join(d, name)
            with open(path, 'w') as f:
                f.write(text)
            got = len(problems(path))
            res = 'ok' if got == want else 'not ok'
            ok &= got == want
            print(f'{res} - {name}: {got} problem(s), expected {want}')
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ['--selftest']:
        return selftest()
    root = sys.argv[2] if sys.argv[1:2] == ['--root'] else '.'
    os.chdir(root)
    files = subprocess.run(['git', 'ls-files', '--', *PRODUCT],
                           capture_output=True, text=True,
                           check=True).stdout.split()
    if not files:
        print('size.py: no source file found (not a git tree?)',
              file=sys.stderr)
        return 2
    return check(sorted(files))


if __name__ == '__main__':
    sys.exit(main())
