#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ksft-report.py - turn the kselftest runner's output into our TAP.

Reads the output of run_kselftest.sh (stdin or files): top-level KTAP
lines ("ok 3 selftests: drivers/net: stats.py"), each test's own output
prefixed with "# " (nested KTAP "ok 1 stats.check_pause # SKIP why",
the forwarding library's "TEST: name  [ OK ]", or net/netdevice.sh's
"PASS: eth0: set MAC address").

Prints the runner's output unchanged as diagnostics ("# ..."), then one
TAP line per subtest ("ok N drivers/net/stats.py: check_pause"), skips and
expected failures as "# SKIP reason", a test that reported no subtest as
one line from its top-level result, and a "not ok" when a test's exit
status says failure although no subtest failed.  Tests that were not run
come from --not-run TEST=REASON and count as skips with that reason.
Ends with a table per test (pass/fail/skip) and "1..N"; exits 1 if any
line is "not ok".
"""
import argparse
import re
import sys

TOP = re.compile(r'^(not )?ok \d+ selftests: (\S+): (\S+)(?:\s*#\s*(.*))?$')
HDR = re.compile(r'^# selftests: (\S+): (\S+)$')
SUB = re.compile(r'^# (?:# )*(not )?ok \d+ (.*?)(?:\s+#\s*(SKIP|XFAIL|TODO)\b\s*(.*))?$', re.I)
FWD = re.compile(r'^# TEST: (.*?)\s+\[\s*(OK|FAIL|SKIP|XFAIL)\s*\]$')
# net/netdevice.sh's own verdicts ("PASS: eth0: set MAC address"); it exits
# 0 whatever they say, so they are its results
KCI = re.compile(r'^# (PASS|FAIL|SKIP|XFAIL): (.*)$')
KCI_TESTS = ('net/netdevice.sh',)
# KTAP plan / totals lines of a nested test are not results
TOTALS = re.compile(r'^# (?:# )*(Totals:|1\.\.\d+|TAP version)')
# nor lines that say nothing about why a test skipped
NOISE = re.compile(r'^(KTAP version|TAP version|1\.\.\d+|timeout set|overriding timeout)')


# Subtests whose only failing check may be a wall-clock bound, and the
# bound: the design rule is that timing never decides a result (under TCG
# a command takes 10-50x its native time).  Such a failure is a skip that
# says so; any other failed check, or an exception, stays a failure.
TIMING = {
    'drivers/net/hw/rss_ctx.py:rss_ctx.test_hitless_key_update': '0.2',
}
CHECK = re.compile(r'Check failed (.*)$')
# csum.py: the receiver (net/lib/csum -R) waits 2 s of wall time; under
# TCG the sender can start after it gave up: no frame arrived at all, and
# the sender's frames met a closed port (ECONNREFUSED).  The frames the
# sender had already sent were valid (the far stack answered them).
CSUM_LATE = ('rx: missing packets at pf_packet: 0 <', 'write: Connection refused')


def timing_only(block, bound, reason):
    fails = [m.group(1).strip() for m in map(CHECK.search, block) if m]
    num = r'[0-9.]+(?:e-?[0-9]+)?'
    if fails and not any('Exception' in x for x in block) and \
       all(re.fullmatch(rf'{num} >= {re.escape(bound)}', f) for f in fails):
        took = fails[0].split()[0]
        return 'skip', (f'only the wall-clock bound failed ({took} s >= '
                        f'{bound} s under TCG); timing does not decide results here')
    return 'fail', reason


class Test:
    def __init__(self, name):
        self.name = name
        self.subs = []          # (status, desc, reason) status: pass/fail/skip
        self.top = None         # (status, comment)
        self.last_msg = ''
        self.block = []         # output lines since the last subtest
        self.timing = False     # a failure was only a wall-clock bound

    def counts(self):
        c = {'pass': 0, 'fail': 0, 'skip': 0}
        for s, _, _ in self.results():
            c[s] += 1
        return c

    def results(self):
        out = list(self.subs)
        top_status, comment = self.top or ('fail', 'no result from the runner')
        if not self.subs:
            if top_status == 'skip':
                out.append(('skip', '', comment or self.last_msg or
                            'the test skipped itself'))
            else:
                out.append((top_status, '', comment))
        elif top_status == 'fail' and not self.timing and \
                not any(s == 'fail' for s, _, _ in self.subs):
            # (a test's exit status counts its timing failure too)
            out.append(('fail', 'exit status', comment))
        return out


def parse(lines):
    tests, cur = [], None
    for raw in lines:
        line = raw.rstrip('\n')
        m = HDR.match(line)
        if m:
            cur = Test(f'{m.group(1)}/{m.group(2)}')
            tests.append(cur)
            continue
        m = TOP.match(line)
        if m:
            name = f'{m.group(2)}/{m.group(3)}'
            if cur is None or cur.name != name:
                cur = Test(name)
                tests.append(cur)
            comment = (m.group(4) or '').strip()
            if m.group(1):
                cur.top = ('fail', comment)
            elif comment.upper().startswith('SKIP'):
                cur.top = ('skip', comment[4:].strip())
            else:
                cur.top = ('pass', comment)
            cur = None
            continue
        if cur is None or TOTALS.match(line):
            continue
        m = FWD.match(line)
        if m:
            st = {'OK': 'pass', 'FAIL': 'fail', 'SKIP': 'skip',
                  'XFAIL': 'skip'}[m.group(2).upper()]
            why = 'expected failure' if m.group(2).upper() == 'XFAIL' else ''
            desc = m.group(1)
            # loopback.sh logs its skip as a passing "TEST: SKIP: why"
            if st == 'pass' and desc.startswith('SKIP:'):
                st, why, desc = 'skip', desc[5:].strip(), 'skip'
            cur.subs.append((st, desc, why))
            continue
        m = KCI.match(line) if cur.name in KCI_TESTS else None
        if m:
            v, desc = m.group(1), m.group(2).strip()
            st = {'PASS': 'pass', 'FAIL': 'fail', 'SKIP': 'skip', 'XFAIL': 'skip'}[v]
            why = {'SKIP': desc, 'XFAIL': 'expected failure: ' + desc}.get(v, '')
            cur.subs.append((st, desc, why))
            continue
        m = SUB.match(line)
        if m:
            directive = (m.group(3) or '').upper()
            reason = (m.group(4) or '').strip()
            if m.group(1):
                st = 'fail'
            elif directive == 'SKIP':
                st = 'skip'
            elif directive == 'XFAIL':
                st, reason = 'skip', 'expected failure: ' + (reason or cur.last_msg)
            else:
                st = 'pass'
            if st == 'skip' and not reason:
                reason = cur.last_msg
            desc = m.group(2).strip()
            if st == 'fail' and cur.name == 'drivers/net/hw/csum.py' and \
               all(any(x in b for b in cur.block) for x in CSUM_LATE):
                st = 'skip'
                reason = ('the receiver\'s 2 s wall-clock window closed before '
                          'the sender started under TCG (no frame seen, '
                          'then ECONNREFUSED); timing does not decide results here')
                cur.timing = True
            if st == 'fail' and f'{cur.name}:{desc}' in TIMING:
                st, reason = timing_only(cur.block, TIMING[f'{cur.name}:{desc}'], reason)
                cur.timing = st == 'skip'
            cur.subs.append((st, desc, reason))
            cur.block = []
            continue
        cur.block.append(line)
        msg = line.lstrip('# ').strip()
        if msg and not NOISE.match(msg):
            cur.last_msg = msg
    return tests


def report(tests, not_run, out=sys.stdout):
    for name, reason in not_run:
        t = Test(name)
        t.top = ('skip', 'not run: ' + reason)
        tests.append(t)
    n, failed = 0, False
    for t in tests:
        for st, desc, reason in t.results():
            n += 1
            label = f'{t.name}: {desc}' if desc else t.name
            if st == 'pass':
                print(f'ok {n} {label}', file=out)
            elif st == 'skip':
                print(f'ok {n} {label} # SKIP {reason}'.rstrip(), file=out)
            else:
                failed = True
                print(f'not ok {n} {label}' + (f' # {reason}' if reason else ''),
                      file=out)
    print('#', file=out)
    print(f'# {"test":42} {"pass":>4} {"fail":>4} {"skip":>4}', file=out)
    for t in tests:
        c = t.counts()
        print(f'# {t.name:42} {c["pass"]:4} {c["fail"]:4} {c["skip"]:4}', file=out)
    print(f'1..{n}', file=out)
    return 1 if failed or n == 0 else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--not-run', action='append', default=[],
                    metavar='TEST=REASON')
    ap.add_argument('files', nargs='*')
    a = ap.parse_args()
    lines = []
    for f in a.files or ['-']:
        fp = sys.stdin if f == '-' else open(f, errors='replace')
        lines += fp.readlines()
    for line in lines:
        print('# ' + line.rstrip('\n') if not line.startswith('#') else
              line.rstrip('\n'))
    not_run = [tuple(x.split('=', 1)) for x in a.not_run]
    return report(parse(lines), not_run)


if __name__ == '__main__':
    sys.exit(main())
