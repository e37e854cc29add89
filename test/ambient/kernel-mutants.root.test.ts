import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { PodNamespace } from '../harness/pod-namespace.js';
import { connect, flush, wire, type KernelCase } from '../kernel/semantics-harness.js';
import { dumpOf, goldenEnv, goldenFlags, loadIptablesGolden, loadNftGolden, type AmbientGolden } from './goldens.js';
import { ambientGoldens } from './goldens.js';
import { iptablesMutants, nftMutants, type AmbientMutant, type Leak } from './mutants.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * The kernel decides: each golden's rules are loaded in a pod namespace routed into a sink, and a
 * real connection of each kind (outbound TCP as an application uid, inbound TCP from the sink, UDP
 * DNS) must reach ztunnel's port (15001, 15006 or TPROXY 15006, 15053); every mutant must send the
 * same connection elsewhere (the sink, the application's own port, or nowhere), and explain must
 * fail it. The `default` golden of every tag with both backends' forms, and the `ingress` golden,
 * whose inbound mutants are equivalent: the kernel answers as for the original.
 */
let pod: PodNamespace;
let listeners: ChildProcess[] = [];
const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-ambient-kernel-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;
const tally = { mutants: 0, equivalent: 0 };

beforeAll(async () => {
  pod = PodNamespace.create({ ipv4: true, ipv6: false, sink: 'reject' });
  listeners = await wire(pod);
});

afterAll(() => {
  console.log(`ambient kernel mutants: ${tally.mutants}, equivalent ${tally.equivalent}`);
  for (const child of listeners) child.kill();
  pod.destroy();
});

const CONNECTION: Readonly<Record<Leak, Omit<KernelCase, 'rules' | 'backend' | 'kernel' | 'model' | 'audits'>>> = {
  outbound: { direction: 'out', port: 80 },
  inbound: { direction: 'in', port: 80 },
  dns: { direction: 'out', port: 53, protocol: 'udp' },
};

function answer(leak: Leak): string {
  return connect(pod, { ...CONNECTION[leak], rules: '', backend: 'nft', kernel: '', model: 'exact', audits: '' });
}

const chosen = ambientGoldens().filter(
  (golden) => golden.name === 'default' || (golden.name === 'ingress' && golden.tag === '1.29.0'),
);

function load(golden: AmbientGolden, text?: string): void {
  flush(pod);
  if (golden.backend === 'nftables') loadNftGolden(pod.pod, { ...golden, text: text ?? golden.text });
  else if (text === undefined) loadIptablesGolden(pod.pod, golden, 'nft');
  else pod.applyRulesText(text, 'nft', 'ipv4');
}

async function explainFails(
  golden: AmbientGolden,
  mutant: AmbientMutant,
): Promise<{ exitCode: number; named: boolean }> {
  const file = path.join(scratch, `k${counter++}`);
  const nft = golden.backend === 'nftables';
  writeFileSync(file, dumpOf(pod.pod, nft ? ['nft', '-j', 'list', 'ruleset'] : ['iptables-nft-save']));
  const flags = goldenFlags(golden).map((flag) => (flag.startsWith('--family=') ? '--family=ipv4' : flag));
  const result = await runExplain(
    [...flags, nft ? `--nft-ruleset=${file}` : `--iptables-save=${file}`],
    goldenEnv(golden),
  );
  return { exitCode: result.exitCode, named: result.stdout.includes(mutant.mustName) };
}

describe('the kernel confirms each ambient mutant opens a bypass, and explain fails it', () => {
  for (const golden of chosen) {
    it(`${golden.tag} ${golden.backend}/${golden.name}`, async () => {
      load(golden);
      const baseline: Record<Leak, string> = {
        outbound: answer('outbound'),
        inbound: answer('inbound'),
        dns: answer('dns'),
      };
      expect(baseline.outbound).toBe('pod:15001');
      expect(baseline.inbound).toBe(golden.name === 'ingress' ? 'pod:80' : 'pod:15006');
      expect(baseline.dns).toBe(golden.name === 'ingress' ? 'sink:53' : 'pod:15053');
      const mutants =
        golden.backend === 'nftables'
          ? nftMutants(golden.text)
          : iptablesMutants(dumpOf(pod.pod, ['iptables-nft-save']));
      expect(mutants.length).toBeGreaterThanOrEqual(5);
      for (const mutant of mutants) {
        load(golden, mutant.text);
        const kernel = answer(mutant.leak);
        const verdict = await explainFails(golden, mutant);
        tally.mutants++;
        if (kernel === baseline[mutant.leak]) {
          tally.equivalent++;
          // The kernel sees no change: an equivalent mutant, which explain must pass.
          expect({ mutant: mutant.name, exitCode: verdict.exitCode }).toEqual({ mutant: mutant.name, exitCode: 0 });
          continue;
        }
        expect({ mutant: mutant.name, kernel }).not.toEqual({ mutant: mutant.name, kernel: baseline[mutant.leak] });
        expect({ mutant: mutant.name, exitCode: verdict.exitCode, named: verdict.named }).toEqual({
          mutant: mutant.name,
          exitCode: 126,
          named: true,
        });
      }
    });
  }
});
