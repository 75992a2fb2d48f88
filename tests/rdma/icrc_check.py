#!/usr/bin/env python3
"""icrc_check.py PCAP - recompute the ICRC of every RoCE v2 frame.

Reads a classic pcap file (dumpcap -P) of Ethernet frames and, for each
IPv4 or IPv6 / UDP 4791 frame, computes the invariant CRC the way IBTA
annex A17 defines it for RoCE v2: CRC-32 over eight 0xff bytes (the
masked LRH) followed by the IP header with its variant fields set to ones
(IPv4: TOS, TTL, header checksum; IPv6: traffic class, flow label, hop
limit), the UDP header with its checksum set to ones, the BTH with its
reserved/FECN/BECN byte set to ones, and the rest of the packet up to the
ICRC, which follows in little-endian byte order.

Prints one line per frame: "FRAME_NUMBER ok|bad SRC", 1-based like tshark.
"""
import ipaddress
import struct
import sys
import zlib


def frames(path):
    with open(path, 'rb') as f:
        data = f.read()
    magic = struct.unpack('<I', data[:4])[0]
    if magic in (0xa1b2c3d4, 0xa1b23c4d):
        end = '<'
    elif magic in (0xd4c3b2a1, 0x4d3cb2a1):
        end = '>'
    else:
        sys.exit('not a classic pcap file: ' + path)
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(end + 'I', data[off + 8:off + 12])[0]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def check(fr):
    """(src, ok) for a RoCE v2 frame, None for anything else"""
    eth = 14
    etype = struct.unpack('!H', fr[12:14])[0]
    if etype == 0x8100:
        eth, etype = 18, struct.unpack('!H', fr[16:18])[0]
    if etype == 0x0800:
        ihl = (fr[eth] & 0xf) * 4
        if fr[eth + 9] != 17:
            return None
        ip = bytearray(fr[eth:eth + ihl])
        ip[1] = 0xff                 # TOS
        ip[8] = 0xff                 # TTL
        ip[10:12] = b'\xff\xff'      # header checksum
        src = str(ipaddress.ip_address(bytes(fr[eth + 12:eth + 16])))
    elif etype == 0x86dd:
        ihl = 40
        if fr[eth + 6] != 17:
            return None
        ip = bytearray(fr[eth:eth + 40])
        ip[0] |= 0x0f                # traffic class (high nibble)
        ip[1:4] = b'\xff\xff\xff'    # traffic class (low nibble), flow label
        ip[7] = 0xff                 # hop limit
        src = str(ipaddress.ip_address(bytes(fr[eth + 8:eth + 24])))
    else:
        return None
    u = eth + ihl
    dport, ulen = struct.unpack('!HH', fr[u + 2:u + 6])
    if dport != 4791 or u + ulen > len(fr) or ulen < 8 + 12 + 4:
        return None
    udp = bytearray(fr[u:u + 8])
    udp[6:8] = b'\xff\xff'
    bth = bytearray(fr[u + 8:u + 20])
    bth[4] = 0xff
    rest = fr[u + 20:u + ulen - 4]
    want = struct.unpack('<I', fr[u + ulen - 4:u + ulen])[0]
    got = zlib.crc32(b'\xff' * 8 + bytes(ip) + bytes(udp) + bytes(bth) + rest)
    return src, got == want


def main():
    for n, fr in enumerate(frames(sys.argv[1]), 1):
        r = check(fr)
        if r:
            print(n, 'ok' if r[1] else 'bad', r[0])


if __name__ == '__main__':
    main()
