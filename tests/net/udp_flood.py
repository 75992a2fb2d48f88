#!/usr/bin/env python3
"""UDP flood helper for the network tests.

  udp_flood.py recv PORT [IDLE_S [FIRST_S]]
                                     count datagrams until IDLE_S of silence
                                     (FIRST_S before the first one, default
                                     30); prints "ready", then the count
  udp_flood.py send ADDR PORT N SIZE send N datagrams as fast as possible;
                                     prints how many sendto() calls succeeded
"""
import socket
import sys


def recv(port, idle, first):
    fam = socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    print("ready", flush=True)
    n = 0
    s.settimeout(first)
    while True:
        try:
            s.recv(65536)
        except socket.timeout:
            break
        n += 1
        s.settimeout(idle)
    print(n, flush=True)


def send(addr, port, count, size):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    payload = b"x" * size
    sent = 0
    for _ in range(count):
        try:
            s.sendto(payload, (addr, port))
            sent += 1
        except OSError:
            pass
    print(sent, flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "recv":
        recv(int(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 2,
             float(sys.argv[4]) if len(sys.argv) > 4 else 30)
    else:
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
