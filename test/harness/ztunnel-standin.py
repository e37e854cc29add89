#!/usr/bin/python3
"""A ztunnel stand-in for tests: binds ztunnel's in-pod ports inside the pod's network namespace,
with SO_MARK 0x539 (1337) on every socket as ztunnel sets it (istio/ztunnel src/inpod/config.rs),
and accepts. It never proxies and never connects anywhere: a redirected connection ends here.

usage: ztunnel-standin.py [--family dual|ipv4|ipv6] [--ports 15001,15006,15008,15053] [--lifetime S]
"""
import argparse
import selectors
import socket
import sys
import time

SO_MARK = 36
ZTUNNEL_MARK = 0x539
MAX_HELD = 256


def listener(family, port):
    if family == 'ipv4':
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        address = ('0.0.0.0', port)
    else:
        sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        # ztunnel binds [::] dual-stack: an IPv4 peer shows as ::ffff:a.b.c.d in /proc/net/tcp6.
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1 if family == 'ipv6' else 0)
        address = ('::', port)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, SO_MARK, ZTUNNEL_MARK)
    sock.bind(address)
    sock.listen(128)
    sock.setblocking(False)
    return sock


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--family', choices=['dual', 'ipv4', 'ipv6'], default='dual')
    parser.add_argument('--ports', default='15001,15006,15008,15053')
    parser.add_argument('--lifetime', type=float, default=600.0)
    args = parser.parse_args()
    selector = selectors.DefaultSelector()
    for port in [int(p) for p in args.ports.split(',') if p]:
        selector.register(listener(args.family, port), selectors.EVENT_READ, 'listen')
    held = []
    sys.stdout.write('ready\n')
    sys.stdout.flush()
    end = time.monotonic() + args.lifetime
    while time.monotonic() < end:
        for key, _ in selector.select(timeout=0.5):
            if key.data == 'listen':
                try:
                    conn, _ = key.fileobj.accept()
                except OSError:
                    continue
                conn.setblocking(False)
                held.append(conn)
                selector.register(conn, selectors.EVENT_READ, 'conn')
                # Bounded: the oldest connection goes when too many are held.
                if len(held) > MAX_HELD:
                    oldest = held.pop(0)
                    selector.unregister(oldest)
                    oldest.close()
            else:
                try:
                    data = key.fileobj.recv(4096)
                except OSError:
                    data = b''
                if not data:
                    selector.unregister(key.fileobj)
                    held.remove(key.fileobj)
                    key.fileobj.close()


if __name__ == '__main__':
    main()
