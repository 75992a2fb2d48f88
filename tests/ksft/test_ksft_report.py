#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host unit test of ksft-report.py's parser: TAP output."""
import importlib.util
import io
import os

spec = importlib.util.spec_from_file_location(
    'ksft_report', os.path.join(os.path.dirname(__file__), 'ksft-report.py'))
kr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kr)

RUN = """TAP version 13
1..4
# timeout set to 600
# selftests: drivers/net: stats.py
# KTAP version 1
# 1..3
# ok 1 stats.check_pause
# # FEC not supported by the device
# ok 2 stats.check_fec # XFAIL
# ok 3 stats.pkt_byte_sum # SKIP qstats not supported by the device
# # Totals: pass:1 fail:0 xfail:1 xpass:0 skip:1 error:0
ok 1 selftests: drivers/net: stats.py
# selftests: drivers/net/hw: ethtool_rmon.sh
# TEST: rx-pkts64to64 on gn30p2                                   [ OK ]
# TEST: tx-pkts64to64 on gn30p2                                   [FAIL]
not ok 2 selftests: drivers/net/hw: ethtool_rmon.sh # exit=1
# selftests: drivers/net/hw: loopback.sh
# SKIP: loopback feature is 'off [fixed]'
ok 3 selftests: drivers/net/hw: loopback.sh # SKIP
# selftests: drivers/net: ping.py
# ok 1 ping.test_v4
not ok 4 selftests: drivers/net: ping.py # exit=1
"""

n = 0


def check(desc, cond):
    global n
    n += 1
    print(f"{'ok' if cond else 'not ok'} {n} {desc}")


tests = kr.parse(io.StringIO(RUN))
check('four tests parsed', [t.name for t in tests] == [
    'drivers/net/stats.py', 'drivers/net/hw/ethtool_rmon.sh',
    'drivers/net/hw/loopback.sh', 'drivers/net/ping.py'])
check('KTAP subtests: pass, xfail as skip with its message, skip with reason',
      tests[0].results() == [
          ('pass', 'stats.check_pause', ''),
          ('skip', 'stats.check_fec', 'expected failure: FEC not supported by the device'),
          ('skip', 'stats.pkt_byte_sum', 'qstats not supported by the device')])
check('forwarding-library TEST lines', tests[1].counts() == {'pass': 1, 'fail': 1, 'skip': 0})
check('a test without subtests skips with its last message',
      tests[2].results() == [('skip', '', "SKIP: loopback feature is 'off [fixed]'")])
check('non-zero exit without a failed subtest is a failure',
      tests[3].counts() == {'pass': 1, 'fail': 1, 'skip': 0})
out = io.StringIO()
rc = kr.report(tests, [('drivers/net/netcons_basic.sh', 'needs netdevsim')], out)
lines = out.getvalue().splitlines()
check('exit status 1 on failure', rc == 1)
check('not-run tests are skips with the reason',
      'ok 9 drivers/net/netcons_basic.sh # SKIP not run: needs netdevsim' in lines)
check('plan line last', lines[-1] == '1..9')
check('only result lines start without "#"',
      all(l.startswith(('ok ', 'not ok ', '#', '1..')) for l in lines))
HITLESS = """# selftests: drivers/net/hw: rss_ctx.py
# ok 3 rss_ctx.test_rss_resize
# # Check| At /build/ksft/drivers/net/hw/./rss_ctx.py, line 305, in test_hitless_key_update:
# # Check|     ksft_lt((t1 - t0).total_seconds(), 0.2)
# # Check failed 0.734 >= 0.2
# not ok 4 rss_ctx.test_hitless_key_update
# # Check failed 3 != 0 carrier
# not ok 5 rss_ctx.test_hitless_key_update
not ok 1 selftests: drivers/net/hw: rss_ctx.py # exit=1
"""
t = kr.parse(io.StringIO(HITLESS))[0]
r = t.results()
check('a failed wall-clock bound alone is a skip that says so',
      r[1][0] == 'skip' and '0.734 s >= 0.2 s' in r[1][2])
check('any other failed check stays a failure', r[2][0] == 'fail')
t = kr.parse(io.StringIO(HITLESS.replace('''# # Check failed 3 != 0 carrier
# not ok 5 rss_ctx.test_hitless_key_update
''', '')))[0]
check('an exit status that only reflects the timing bound adds no failure',
      t.counts() == {'pass': 1, 'fail': 0, 'skip': 1})
t = kr.parse(io.StringIO("""# selftests: drivers/net/hw: loopback.sh
# TEST: SKIP: dev gn30p2 does not support loopback feature            [ OK ]
ok 1 selftests: drivers/net/hw: loopback.sh # SKIP
"""))[0]
check('a forwarding "TEST: SKIP: why [ OK ]" line is a skip with its reason',
      t.results() == [('skip', 'skip', 'dev gn30p2 does not support loopback feature')])
t = kr.parse(io.StringIO('''# selftests: drivers/net/hw: csum.py
# # Exception| STDERR: b'tx: sending checksum: 0x218d\\n/build/ksft/net/lib/csum: write: Connection refused\\n'
# # Exception| STDERR: b'/build/ksft/net/lib/csum: rx: missing packets at pf_packet: 0 < 100\\n'
# not ok 11 csum.ipv6_tx_udp_csum_offload
# # Exception| STDERR: b'/build/ksft/net/lib/csum: rx: missing packets at pf_packet: 37 < 100\\n'
# not ok 12 csum.ipv6_tx_udp_zero_checksum
not ok 1 selftests: drivers/net/hw: csum.py # exit=1
'''))[0]
check('csum: a receiver that gave up before the sender began is a timing skip',
      [x[0] for x in t.results()] == ['skip', 'fail'])
t = kr.parse(io.StringIO("""# selftests: net: netdevice.sh
# PASS: eth0: set interface up
# FAIL: eth0: Cannot set MAC address
# SKIP: eth0: set IP address
# XFAIL: eth0: ethtool -d not supported
ok 1 selftests: net: netdevice.sh
"""))[0]
check("netdevice.sh: its PASS/FAIL/SKIP/XFAIL lines are its results, though it exits 0",
      [x[0] for x in t.results()] == ['pass', 'fail', 'skip', 'skip'] and
      t.results()[1][1] == 'eth0: Cannot set MAC address')
print(f'1..{n}')
