#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""barrier.py serve PORT NAME TIMEOUT | join ADDR PORT NAME TIMEOUT

A two-party barrier over TCP, for tests that run on two machines
(tests/multi/): node 0 serves, node 1 joins.  Both return once the other
has arrived at the barrier of the same NAME; a different NAME (the nodes
out of step) or TIMEOUT seconds without the other fail with a message
that says which.  Node 1 retries its connection until node 0 listens.
"""
import socket
import sys
import time


def fail(msg):
    print("barrier: " + msg, file=sys.stderr)
    sys.exit(1)


def exchange(conn, name, timeout):
    conn.settimeout(timeout)
    conn.sendall((name + "\n").encode())
    got = conn.makefile().readline().strip()
    if got != name:
        fail("this node is at barrier %r, the other at %r" % (name, got))


def main(argv):
    if len(argv) == 5 and argv[1] == "serve":
        port, name, timeout = int(argv[2]), argv[3], float(argv[4])
        with socket.create_server(("0.0.0.0", port), reuse_port=False) as srv:
            srv.settimeout(timeout)
            try:
                conn, _ = srv.accept()
            except socket.timeout:
                fail("node 1 did not reach barrier %r within %g s" % (name, timeout))
            with conn:
                exchange(conn, name, timeout)
    elif len(argv) == 6 and argv[1] == "join":
        addr, port, name, timeout = argv[2], int(argv[3]), argv[4], float(argv[5])
        end = time.monotonic() + timeout
        while True:
            try:
                conn = socket.create_connection((addr, port), timeout=5)
                break
            except OSError as e:
                if time.monotonic() > end:
                    fail("node 0 (%s:%d) did not reach barrier %r within %g s: %s"
                         % (addr, port, name, timeout, e))
                time.sleep(0.5)
        with conn:
            exchange(conn, name, max(end - time.monotonic(), 5))
    else:
        fail(__doc__.strip().splitlines()[0])


if __name__ == "__main__":
    main(sys.argv)
