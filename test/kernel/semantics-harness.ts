import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseIp, type IpAddress } from '../../src/addr/ip.js';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import type { Ruleset, Table } from '../../src/rules/model.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import type { Outcome } from '../../src/trace/outcome.js';
import type { Packet } from '../../src/trace/packet.js';
import { tracePacket } from '../../src/trace/trace.js';
import type { PodNamespace } from '../harness/pod-namespace.js';

/**
 * One connection through real rules: where the kernel delivered it, observed by who answered.
 * Listeners in the pod answer `pod:PORT` (the redirect ports and the application's port 80);
 * listeners in the sink, on the service addresses it holds on lo, answer `sink:PORT`. Nothing
 * leaves the machine: the sink has no route out.
 */
export type Backend = 'iptables-nft' | 'iptables-legacy' | 'nft';
export type Direction = 'out' | 'in';

export interface KernelCase {
  /** What is audited: the target, statement or match as docs/rules.md lists it. */
  readonly audits: string;
  readonly backend: Backend;
  readonly direction: Direction;
  readonly family?: 'ipv4' | 'ipv6';
  /** iptables-restore input (whole tables) or an nft script. */
  readonly rules: string;
  readonly port?: number;
  readonly protocol?: 'tcp' | 'udp';
  readonly uid?: number;
  /** Where the kernel delivers the connection: `pod:P`, `sink:P` or `dropped`. */
  readonly kernel: string;
  /** The model gives the kernel's answer (`exact`) or declines to decide (`unknown`). */
  readonly model: 'exact' | 'unknown';
}

const SERVICE = { ipv4: '10.96.0.10', ipv6: 'fd00:10:96::10' } as const;
export const OTHER_SERVICE = '10.96.0.11';
const POD_PORTS = [80, 15001];
const INBOUND_PORT = 15006;
const SINK_PORTS = [80, 8081];
/** Where captured DNS goes (UDP), as Istio's 15053. */
const DNS_PORT = 15053;
export const TPROXY_MARK = 0x100;

const LISTENER = `const net = require('net');
const [tag, v6only, ...ports] = process.argv.slice(2);
const answer = (port) => (socket) => socket.end(tag + ':' + port + '\\n');
for (const port of ports) {
  if (v6only !== 'v6only') net.createServer(answer(port)).listen({ port: Number(port), host: '0.0.0.0' });
  net.createServer(answer(port)).listen({ port: Number(port), host: '::', ipv6Only: true });
}
setTimeout(() => process.stdout.write('ready\\n'), 200);`;
/**
 * TPROXY hands a packet only to a socket with IP_TRANSPARENT (the kernel drops it otherwise), which
 * Node cannot set: the IPv4 inbound port is served by Perl (perl-base is in every Debian system).
 */
const TRANSPARENT_LISTENER = `use Socket; my ($tag, $port) = @ARGV;
socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
setsockopt($s, SOL_SOCKET, SO_REUSEADDR, 1) or die "SO_REUSEADDR: $!";
setsockopt($s, 0, 19, 1) or die "IP_TRANSPARENT: $!";
bind($s, sockaddr_in($port, INADDR_ANY)) or die "bind: $!";
listen($s, 16) or die "listen: $!";
$| = 1; print "ready\\n";
while (accept(my $c, $s)) { syswrite($c, "$tag:$port\\n"); close($c); }`;
const UDP_LISTENER = `const dgram = require('dgram');
const [tag, ...ports] = process.argv.slice(2);
for (const port of ports)
  for (const type of ['udp4', 'udp6']) {
    const socket = dgram.createSocket({ type, ipv6Only: type === 'udp6' });
    socket.on('message', (_m, from) => socket.send(tag + ':' + port, from.port, from.address));
    socket.bind(Number(port));
  }
setTimeout(() => process.stdout.write('ready\\n'), 200);`;
// A drop shows as silence; the wait is long enough that a slow machine never mistakes an answer for one.
const CLIENT = `const net = require('net');
const dgram = require('dgram');
const [host, port, protocol] = process.argv.slice(2);
const done = (text) => { process.stdout.write(text); process.exit(0); };
setTimeout(() => done('dropped'), 5000);
if (protocol === 'udp') {
  const udp = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
  udp.on('message', (message) => done(String(message)));
  udp.on('error', () => done('dropped'));
  udp.send('q', Number(port), host);
  return;
}
const socket = net.connect({ host, port: Number(port) });
let data = '';
socket.on('data', (chunk) => { data += chunk; });
socket.on('end', () => done(data.trim()));
socket.on('error', (error) => done(['EPERM', 'ECONNREFUSED'].includes(error.code) ? 'dropped' : error.code));`;

/** Service addresses on the sink's lo, listeners on both sides, and TPROXY's routing in the pod. */
export async function wire(pod: PodNamespace): Promise<ChildProcess[]> {
  pod.execSink('ip', 'addr', 'add', `${SERVICE.ipv4}/32`, 'dev', 'lo');
  pod.execSink('ip', 'addr', 'add', `${OTHER_SERVICE}/32`, 'dev', 'lo');
  pod.execSink('ip', 'addr', 'add', `${SERVICE.ipv6}/128`, 'dev', 'lo');
  pod.exec('ip', 'rule', 'add', 'fwmark', `${TPROXY_MARK}/${TPROXY_MARK}`, 'lookup', '100');
  pod.exec('ip', 'route', 'add', 'local', '0.0.0.0/0', 'dev', 'lo', 'table', '100');
  writeFileSync(path.join(pod.tmp, 'listener.cjs'), LISTENER);
  writeFileSync(path.join(pod.tmp, 'transparent.pl'), TRANSPARENT_LISTENER);
  writeFileSync(path.join(pod.tmp, 'client.cjs'), CLIENT);
  writeFileSync(path.join(pod.tmp, 'udp-listener.cjs'), UDP_LISTENER);
  const run = (ns: string, args: string[]): ChildProcess =>
    spawn('ip', ['netns', 'exec', ns, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const listen = (ns: string, tag: string, mode: string, ports: number[]): ChildProcess =>
    run(ns, [process.execPath, path.join(pod.tmp, 'listener.cjs'), tag, mode, ...ports.map(String)]);
  const children = [
    listen(pod.pod, 'pod', 'both', POD_PORTS),
    listen(pod.pod, 'pod', 'v6only', [INBOUND_PORT]),
    run(pod.pod, ['perl', path.join(pod.tmp, 'transparent.pl'), 'pod', String(INBOUND_PORT)]),
    listen(pod.sink, 'sink', 'both', SINK_PORTS),
    run(pod.pod, [process.execPath, path.join(pod.tmp, 'udp-listener.cjs'), 'pod', String(DNS_PORT)]),
    run(pod.sink, [process.execPath, path.join(pod.tmp, 'udp-listener.cjs'), 'sink', '53']),
  ];
  await Promise.all(children.map((child) => new Promise((resolve) => child.stdout?.once('data', resolve))));
  return children;
}

/** Removes every rule of both backends, so each case starts from nothing. */
export function flush(pod: PodNamespace): void {
  pod.exec('nft', 'flush', 'ruleset');
  for (const family of ['ipv4', 'ipv6'] as const) {
    const empty = ['raw', 'mangle', 'nat', 'filter'].map((table) => `*${table}\nCOMMIT\n`).join('');
    pod.applyRulesText(empty, 'legacy', family);
  }
}

export function install(pod: PodNamespace, testCase: KernelCase): void {
  const family = testCase.family ?? 'ipv4';
  if (testCase.backend === 'nft')
    execFileSync('ip', ['netns', 'exec', pod.pod, 'nft', '-f', '-'], { input: testCase.rules });
  else pod.applyRulesText(testCase.rules, testCase.backend === 'iptables-nft' ? 'nft' : 'legacy', family);
}

/** The connection, made for real: from the pod as the case's uid (out) or from the sink (in). */
export function connect(pod: PodNamespace, testCase: KernelCase): string {
  const family = testCase.family ?? 'ipv4';
  const port = String(testCase.port ?? 80);
  const client = [process.execPath, path.join(pod.tmp, 'client.cjs')];
  const protocol = testCase.protocol ?? 'tcp';
  if (testCase.direction === 'in') {
    const target = family === 'ipv4' ? pod.ipv4Address : pod.ipv6Address;
    return pod.execSink(...client, target, port, protocol).trim();
  }
  const uid = String(testCase.uid ?? 1000);
  return pod
    .exec('setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...client, SERVICE[family], port, protocol)
    .trim();
}

/** The rules as the real tools print them back, read by the product's parsers. */
export function readBack(pod: PodNamespace, testCase: KernelCase): Ruleset {
  const family = testCase.family ?? 'ipv4';
  let tables: readonly Table[];
  if (testCase.backend === 'nft') {
    const parsed = parseNftJson(pod.exec('nft', '-j', 'list', 'ruleset'), 'nft -j list ruleset');
    if (!parsed.ok) throw new Error(parsed.error.message);
    tables = parsed.tables;
  } else {
    const backend = testCase.backend;
    const tool = `${family === 'ipv4' ? 'iptables' : 'ip6tables'}-${backend === 'iptables-nft' ? 'nft' : 'legacy'}-save`;
    const parsed = parseIptablesSave(pod.exec(tool), { backend, family, source: tool });
    if (!parsed.ok) throw new Error(parsed.error.message);
    tables = parsed.tables;
  }
  return { tables };
}

/** The model's answer for the same connection, in the kernel's terms. */
export function modelAnswer(pod: PodNamespace, ruleset: Ruleset, testCase: KernelCase): string {
  const family = testCase.family ?? 'ipv4';
  const ip = (text: string): IpAddress => parseIp(text) as IpAddress;
  const podAddress = ip(family === 'ipv4' ? pod.ipv4Address : pod.ipv6Address);
  const port = testCase.port ?? 80;
  const out = testCase.direction === 'out';
  const uid = testCase.uid ?? 1000;
  const packet: Packet = out
    ? {
        family,
        hook: 'output',
        protocol: testCase.protocol ?? 'tcp',
        source: podAddress,
        destination: ip(SERVICE[family]),
        sourcePort: 40000,
        destinationPort: port,
        uid,
        gid: uid,
        outInterface: 'eth0',
      }
    : {
        family,
        hook: 'prerouting',
        protocol: testCase.protocol ?? 'tcp',
        source: ip(family === 'ipv4' ? pod.ipv4Address.replace(/\.2$/, '.1') : pod.ipv6Address.replace(/::2$/, '::1')),
        destination: podAddress,
        sourcePort: 40000,
        destinationPort: port,
        inInterface: 'eth0',
      };
  return observed(tracePacket(ruleset, packet).outcome, out ? 'sink' : 'pod', port);
}

function observed(outcome: Outcome, original: 'pod' | 'sink', port: number): string {
  switch (outcome.kind) {
    case 'redirect':
      return `pod:${outcome.port ?? port}`;
    case 'tproxy':
      return `pod:${outcome.port}`;
    case 'dnat':
      return `${outcome.address === undefined ? original : 'sink'}:${outcome.port ?? port}`;
    case 'accept':
      return `${original}:${port}`;
    case 'drop':
      return 'dropped';
    case 'unknown':
      return 'unknown';
  }
}
