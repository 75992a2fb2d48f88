#!/usr/bin/env python3
"""roce_inject.py - put hand-made RoCE v2 frames on a port's cable.

Frames go out of IFACE through an AF_PACKET socket, so they reach the
RoCE engine at the other end of its cable the way a frame from another
host would: with no engine's "unaltered" mark, ICRC checked.

  roce_inject.py send IFACE DMAC SRC_IP DST_IP DQPN PSN
      one SEND Only of 8 bytes with a correct ICRC (IPv4 or IPv6 by the
      address family)
  roce_inject.py reads IFACE DMAC SRC_IP DST_IP DQPN PSN VA RKEY LEN [...]
      RDMA READ Request Only frames, one per PSN VA RKEY LEN group, back
      to back (numbers in C notation: 0x... is hex)
  roce_inject.py fuzz IFACE DMAC SRC_IP DST_IP DQPN SECONDS SEED
      for SECONDS, malformed and boundary frames towards DQPN and its
      neighbours: truncated frames and bad lengths, unknown opcodes, UD
      datagrams (to QP1 and others, right and wrong Q_Keys, short DETHs), IPv6
      extension headers, stacked VLANs, bad and missing ICRCs, PSNs at the
      wrap-around, reserved bits set; prints how many of each kind went out

The ICRC is computed as tests/rdma/icrc_check.py checks it.
"""
import ipaddress
import random
import socket
import struct
import sys
import time
import zlib

ETH_P_ALL = 3


def ip_csum(hdr):
    s = sum(struct.unpack('!10H', hdr))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def icrc(ip, udp, bth, rest, v4):
    ip = bytearray(ip)
    if v4:
        ip[1] = 0xff
        ip[8] = 0xff
        ip[10:12] = b'\xff\xff'
    else:
        ip[0] |= 0x0f
        ip[1:4] = b'\xff\xff\xff'
        ip[7] = 0xff
    udp = bytearray(udp)
    udp[6:8] = b'\xff\xff'
    bth = bytearray(bth)
    bth[4] = 0xff
    return zlib.crc32(b'\xff' * 8 + bytes(ip) + bytes(udp) + bytes(bth) + rest)


def frame(dmac, smac, src, dst, opcode, dqpn, psn, payload=b'', ext=b'',
          icrc_mode='good', vlans=(), v6_ext=False, udp_len_delta=0,
          ip_len_delta=0, flags=0, pad=None):
    """A RoCE v2 frame; every field a fuzzer wants to bend is a parameter."""
    v4 = src.version == 4
    if pad is None:
        pad = (-len(payload)) & 3
    bth = struct.pack('!BBHII', opcode, flags | (pad << 4), 0xffff,
                      dqpn & 0xffffff, psn & 0xffffff)
    rest = ext + payload + b'\0' * pad
    ulen = 8 + len(bth) + len(rest) + (4 if icrc_mode != 'missing' else 0)
    udp = struct.pack('!HHHH', 0xc000 | (dqpn & 0x3fff), 4791,
                      (ulen + udp_len_delta) & 0xffff, 0)
    exthdr = b''
    if v4:
        ip = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, 0,
                                   (20 + ulen + ip_len_delta) & 0xffff, 0,
                                   0x4000, 64, 17, 0, src.packed, dst.packed))
        ip[10:12] = struct.pack('!H', ip_csum(bytes(ip)))
        etype = 0x0800
    else:
        nh = 17
        if v6_ext:    # a hop-by-hop options header before UDP
            exthdr = bytes([17, 0, 1, 4, 0, 0, 0, 0])
            nh = 0
        ip = bytearray(struct.pack('!IHBB16s16s', 6 << 28,
                                   (len(exthdr) + ulen + ip_len_delta) & 0xffff,
                                   nh, 64, src.packed, dst.packed))
        etype = 0x86dd
    crc = icrc(bytes(ip), udp, bth, rest, v4)
    if icrc_mode == 'bad':
        crc ^= 0x1
    tail = b'' if icrc_mode == 'missing' else struct.pack('<I', crc)
    l2 = dmac + smac
    for vid in vlans:
        l2 += struct.pack('!HH', 0x8100, vid)
    l2 += struct.pack('!H', etype)
    return l2 + bytes(ip) + exthdr + udp + bth + rest + tail


def mac(s):
    return bytes(int(x, 16) for x in s.split(':'))


def open_port(iface):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    smac = s.getsockname()[4]
    return s, smac


def reth(va=0, rkey=0, dlen=0):
    return struct.pack('!QII', va, rkey, dlen)


def fuzz_one(rng, dmac, smac, src, dst, dqpn):
    """(kind, frame) of one malformed or boundary frame."""
    kind = rng.choice(['truncated', 'bad_udp_len', 'bad_ip_len',
                       'unknown_opcode', 'v6_ext', 'stacked_vlan',
                       'bad_icrc', 'missing_icrc', 'psn_wrap', 'reserved',
                       'bad_reth', 'big_payload', 'bad_pad', 'ud', 'ud',
                       'ud_qp1'])
    qpn = rng.choice([dqpn, dqpn + 1, dqpn - 1, 0, 1, 0xffffff,
                      rng.randrange(1 << 24)])
    psn = rng.choice([0, 0xffffff, 0xfffffe, rng.randrange(1 << 24)])
    op = rng.choice([0x04, 0x00, 0x01, 0x02, 0x06, 0x0a, 0x0c, 0x10, 0x11])
    pay = bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 8, 256])))
    ext = reth(rng.choice([0, 1 << 63, rng.randrange(1 << 64)]),
               rng.randrange(1 << 32),
               rng.choice([0, 1, 0xffffffff, rng.randrange(1 << 32)])) \
        if op in (0x06, 0x0a, 0x0c) else b''
    args = dict(payload=pay, ext=ext)
    if kind == 'truncated':
        f = frame(dmac, smac, src, dst, op, qpn, psn, **args)
        return kind, f[:rng.randrange(14, len(f))]
    if kind == 'bad_udp_len':
        args['udp_len_delta'] = rng.choice([-30, -1, 1, 1000, 40000])
    elif kind == 'bad_ip_len':
        args['ip_len_delta'] = rng.choice([-40, -1, 1, 1000, 40000])
    elif kind == 'unknown_opcode':
        op = rng.choice([0x05, 0x0e, 0x12, 0x13, 0x14, 0x15, 0x16, 0x18,
                         0x20, 0x64, 0x81, 0xc0, 0xff])
    elif kind == 'v6_ext':
        if src.version == 4:
            kind = 'bad_icrc'
            args['icrc_mode'] = 'bad'
        else:
            args['v6_ext'] = True
    elif kind == 'stacked_vlan':
        args['vlans'] = [rng.randrange(4096) for _ in range(rng.choice([1, 2, 3]))]
    elif kind == 'bad_icrc':
        args['icrc_mode'] = 'bad'
    elif kind == 'missing_icrc':
        args['icrc_mode'] = 'missing'
    elif kind == 'psn_wrap':
        psn = rng.choice([0xffffff, 0xfffffe, 0, 1, 0x800000, 0x7fffff])
    elif kind == 'reserved':
        args['flags'] = rng.choice([0x0f, 0x40, 0x80, 0xcf])
    elif kind == 'bad_reth':
        op = 0x0a
        args['ext'] = reth(rng.randrange(1 << 64), rng.randrange(1 << 32),
                           rng.choice([0xffffffff, 0x80000000, 4097]))
    elif kind == 'big_payload':
        args['payload'] = bytes(rng.choice([4097, 8000, 9000]) - 200)
    elif kind == 'bad_pad':
        args['pad'] = 3
    elif kind in ('ud', 'ud_qp1'):
        # UD SEND Only (+imm): DETH (Q_Key, source QP), the right or a
        # wrong Q_Key (QP1's is 0x80010000), up to past one MTU, a DETH
        # cut short
        op = rng.choice([0x64, 0x65])
        if kind == 'ud_qp1':
            qpn = 1
        qkey = rng.choice([0x80010000, 0, 0xffffffff, rng.randrange(1 << 32)])
        deth = struct.pack('!II', qkey, rng.randrange(1 << 24))
        args['ext'] = rng.choice([deth, deth, deth[:rng.randrange(8)]])
        if op == 0x65:
            args['ext'] += struct.pack('!I', rng.randrange(1 << 32))
        args['payload'] = bytes(rng.choice([0, 1, 216, 256, 1024, 2000, 4000]))
    return kind, frame(dmac, smac, src, dst, op, qpn, psn, **args)


def main():
    if len(sys.argv) < 8:
        sys.exit(__doc__)
    cmd, iface, dmac = sys.argv[1], sys.argv[2], mac(sys.argv[3])
    src = ipaddress.ip_address(sys.argv[4])
    dst = ipaddress.ip_address(sys.argv[5])
    dqpn = int(sys.argv[6], 0)
    s, smac = open_port(iface)
    if cmd == 'send':
        psn = int(sys.argv[7], 0)
        s.send(frame(dmac, smac, src, dst, 0x04, dqpn, psn,
                     payload=b'injected'))
        print('sent 1 SEND Only to QP %d PSN %d from %s' % (dqpn, psn, src))
        return
    if cmd == 'reads':
        groups = sys.argv[7:]
        if not groups or len(groups) % 4:
            sys.exit(__doc__)
        frames = []
        for i in range(0, len(groups), 4):
            psn, va, rkey, ln = (int(x, 0) for x in groups[i:i + 4])
            reth = struct.pack('!QII', va, rkey, ln)
            frames.append(frame(dmac, smac, src, dst, 0x0c, dqpn, psn,
                                ext=reth))
        for f in frames:
            s.send(f)
        print('sent %d READ requests to QP %d from %s' % (len(frames), dqpn,
                                                          src))
        return
    if cmd != 'fuzz' or len(sys.argv) < 9:
        sys.exit(__doc__)
    secs, rng = float(sys.argv[7]), random.Random(int(sys.argv[8]))
    counts, end, n, last = {}, time.monotonic() + secs, 0, time.monotonic()
    while time.monotonic() < end:
        kind, f = fuzz_one(rng, dmac, smac, src, dst, dqpn)
        try:
            s.send(f)
        except OSError as e:    # too short / too long for the link
            kind += '(refused:%s)' % e.errno
        counts[kind] = counts.get(kind, 0) + 1
        n += 1
        if time.monotonic() - last >= 5:
            last = time.monotonic()
            print('# fuzz: %d frames so far' % n, flush=True)
    print('fuzz: %d frames in %.0f s: %s' % (
        n, secs, ', '.join('%s %d' % kv for kv in sorted(counts.items()))))


if __name__ == '__main__':
    main()
