import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { traceSpaces } from '../../src/expect/verify.js';
import { analyzeDumps } from '../../src/rules-check/analyze.js';
import { atomOf } from '../../src/trace/interface-atoms.js';
import { intersectSets, span, subtractSets, unionSets, type IntervalSet } from '../../src/trace/interval-set.js';
import { intersectMarks, ZERO_MARK } from '../../src/trace/mark-set.js';
import type { Piece } from '../../src/trace/trace-region.js';
import { flagsFor, loadManifest } from '../explain/corpus.js';
import { corpusFile, usePods, type PodNamespace } from '../harness/pod-namespace.js';
import { prng } from '../harness/prng.js';
import { specFromFlags } from '../harness/spec.js';

/**
 * The model against the kernel: random outbound TCP connections drawn from every class (piece)
 * the analysis reports, sent through the case's real rules in a pod namespace as the class's uid
 * and gid. A listener on every port the rules redirect to answers with its port; whatever is not
 * redirected leaves through eth0 into the sink, which answers ICMP unreachable. Nothing leaves
 * the machine; every connect is bounded by a timeout.
 */
const run = promisify(execFile);
const pods = usePods(afterEach);
const random = prng(2026);
const PER_CASE = 90;
const CASES = [
  'linkerd/cni-default',
  'linkerd/control-plane-default',
  'linkerd/custom-uid-port-ranges',
  'linkerd/ipv6-gid-subnets',
  'linkerd/redirect-listed-ports',
  'istio-cni/basic',
  'istio-cni/custom-uid',
  'istio-cni/status-ports',
  'istio-cni/include-exclude-ports',
  'istio/ip-range',
  'istio/outbound-ports-include',
  'istio/ipnets',
  'istio/tproxy',
];
let total = 0;

const LISTENER = `const net = require('net');
for (const port of JSON.parse(process.argv[2])) net.createServer((s) => s.end(port + '\\\\n')).listen(port, '0.0.0.0');
process.stdout.write('ready\\\\n');`;
const CLIENT = `const net = require('net');
const packets = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
Promise.all(packets.map(([host, port]) => new Promise((done) => {
  const socket = net.connect({ host, port });
  let data = '';
  const timer = setTimeout(() => { socket.destroy(); done(null); }, 3000);
  socket.on('data', (chunk) => { data += chunk; });
  socket.on('end', () => { clearTimeout(timer); done(parseInt(data, 10) || null); });
  socket.on('error', () => { clearTimeout(timer); done(null); });
}))).then((answers) => process.stdout.write(JSON.stringify(answers)));`;

/** 0/8, 127/8, multicast and reserved, and the pod's own /24 (its neighbours would be ARPed). */
function unroutable(pod: PodNamespace): IntervalSet {
  const [a, b, c] = pod.ipv4Address.split('.').map(BigInt) as [bigint, bigint, bigint];
  const own = (a << 24n) | (b << 16n) | (c << 8n);
  return [
    [0n, 0xffffffn],
    [0x7f000000n, 0x7fffffffn],
    [own, own + 255n],
    [0xe0000000n, 0xffffffffn],
  ].reduce<IntervalSet>((set, [from, to]) => unionSets(set, span(from as bigint, to as bigint)), []);
}

function draw(set: IntervalSet): bigint {
  const [from, to] = set[Math.floor(random() * set.length)] as readonly [bigint, bigint];
  return from + BigInt(Math.floor(random() * Number(to - from + 1n)));
}

/** A few ids per case (each id is one process), drawn from the region where the pool has none. */
function idFrom(set: IntervalSet, pool: bigint[]): bigint {
  const fit = pool.filter((id) => intersectSets(set, span(id, id)).length > 0);
  if (fit.length > 0) return fit[Math.floor(random() * fit.length)] as bigint;
  const id = draw(intersectSets(set, span(1n, 65000n)).length > 0 ? intersectSets(set, span(1n, 65000n)) : set);
  pool.push(id);
  return id;
}

interface Drawn {
  readonly host: string;
  readonly port: number;
  readonly uid: bigint;
  readonly gid: bigint;
  readonly expected: number | null;
  readonly piece: Piece;
}

function drawPackets(pieces: readonly Piece[], pod: PodNamespace, eth0: bigint, ids: bigint[]): Drawn[] {
  const usable = pieces.flatMap((piece) => {
    const daddr = subtractSets(piece.region.daddr, unroutable(pod));
    const modelled =
      piece.outcome.kind === 'accept' || (piece.outcome.kind === 'redirect' && piece.outcome.port !== undefined);
    const reachable =
      (piece.region.protocols & 1) !== 0 &&
      (piece.region.iface & eth0) !== 0n &&
      intersectMarks(piece.region.mark, ZERO_MARK).length > 0;
    return modelled && reachable && daddr.length > 0 ? [{ piece, daddr }] : [];
  });
  return Array.from({ length: usable.length === 0 ? 0 : PER_CASE }, () => {
    const { piece, daddr } = usable[Math.floor(random() * usable.length)] as (typeof usable)[number];
    const address = draw(daddr);
    const host = [24n, 16n, 8n, 0n].map((shift) => String((address >> shift) & 255n)).join('.');
    const expected = piece.outcome.kind === 'redirect' ? (piece.outcome.port as number) : null;
    return {
      host,
      port: Number(draw(piece.region.dport)),
      uid: idFrom(piece.region.uid, ids),
      gid: idFrom(piece.region.gid, ids),
      expected,
      piece,
    };
  });
}

async function send(pod: PodNamespace, packets: readonly Drawn[]): Promise<Array<number | null>> {
  const groups = new Map<string, number[]>();
  packets.forEach((packet, index) =>
    groups.set(`${packet.uid}:${packet.gid}`, [...(groups.get(`${packet.uid}:${packet.gid}`) ?? []), index]),
  );
  const answers: Array<number | null> = new Array(packets.length).fill(null);
  writeFileSync(path.join(pod.tmp, 'client.cjs'), CLIENT);
  await Promise.all(
    [...groups].map(async ([owner, indexes]) => {
      const [uid, gid] = owner.split(':');
      const file = path.join(pod.tmp, `packets-${uid}-${gid}.json`);
      writeFileSync(file, JSON.stringify(indexes.map((index) => [packets[index]?.host, packets[index]?.port])));
      const { stdout } = await run(
        'ip',
        [
          'netns',
          'exec',
          pod.pod,
          'setpriv',
          `--reuid=${uid}`,
          `--regid=${gid}`,
          '--clear-groups',
          process.execPath,
          path.join(pod.tmp, 'client.cjs'),
          file,
        ],
        { timeout: 20_000 },
      );
      (JSON.parse(stdout) as Array<number | null>).forEach((answer, i) => (answers[indexes[i] as number] = answer));
    }),
  );
  return answers;
}

describe('the kernel sends every drawn packet where the model says', () => {
  const manifest = loadManifest();
  for (const dir of CASES) {
    it(dir, async () => {
      const testCase = manifest.find((c) => c.dir === dir);
      if (!testCase) throw new Error(`${dir} is not in the manifest`);
      const spec = specFromFlags(flagsFor(testCase).argv);
      const file = corpusFile(dir, 'iptables-nft-save.v4.txt');
      const analysis = analyzeDumps(
        spec,
        [{ backend: 'iptables-nft', family: 'ipv4', source: file, text: readFileSync(file, 'utf8') }],
        { families: ['ipv4'] },
      );
      if (analysis.kind !== 'checked') throw new Error('the corpus dump does not parse');
      const output = traceSpaces(analysis.merged.ruleset, spec, ['ipv4']).find(
        (space) => space.scope.hook === 'output',
      );
      const pod = pods({ sink: 'reject' });
      pod.applyRules(file, 'nft');
      const ports = [
        ...new Set(
          output?.pieces.flatMap((p) => (p.outcome.kind === 'redirect' && p.outcome.port ? [p.outcome.port] : [])),
        ),
      ];
      writeFileSync(path.join(pod.tmp, 'listener.cjs'), LISTENER);
      const listener = spawn(
        'ip',
        ['netns', 'exec', pod.pod, process.execPath, path.join(pod.tmp, 'listener.cjs'), JSON.stringify(ports)],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      try {
        await new Promise((resolve, reject) => {
          listener.stdout.once('data', resolve);
          listener.once('exit', () => reject(new Error('the listener exited')));
        });
        const eth0 = output ? atomOf(output.scope.atoms, 'eth0') : 0n;
        const packets = drawPackets(
          output?.pieces ?? [],
          pod,
          eth0,
          [...spec.proxyUids, ...spec.proxyGids].map(BigInt),
        );
        const answers = await send(pod, packets);
        const wrong = packets.flatMap((packet, index) =>
          answers[index] === packet.expected
            ? []
            : [
                `${packet.host}:${packet.port} uid ${packet.uid} gid ${packet.gid}: kernel ${answers[index] ?? 'not redirected'}, model ${packet.expected ?? 'not redirected'} (${packet.piece.decidedBy?.text ?? 'policy'})`,
              ],
        );
        expect(wrong).toEqual([]);
        expect(packets.length).toBe(PER_CASE);
        expect(
          new Set(packets.map((p) => p.expected)).size,
          'both redirected and unredirected classes were drawn',
        ).toBeGreaterThan(1);
        total += packets.length;
      } finally {
        listener.kill();
      }
    });
  }
  afterAll(() => {
    expect(total).toBeGreaterThanOrEqual(1000);
  });
});
