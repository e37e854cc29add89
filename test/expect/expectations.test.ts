import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/explain-command.js';
import { outboundExpectations } from '../../src/expect/outbound-expectations.js';
import { inboundExpectations } from '../../src/expect/inbound-expectations.js';
import { connectionSpace } from '../../src/trace/connection-space.js';
import { buildInterfaceAtoms } from '../../src/trace/interface-atoms.js';
import { intersect, type Region } from '../../src/trace/region.js';
import { CORPUS } from '../explain/corpus.js';
import { specFromFlags } from '../harness/spec.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-expect-'));
const atoms = buildInterfaceAtoms(['eth+', 'lo']);
const space = (ctstates: number): Region => ({ ...connectionSpace('ipv4', atoms.all), ctstates });

async function explainFile(text: string, argv: readonly string[]) {
  const file = path.join(scratch, `${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(file, text);
  return runExplain([...argv, `--iptables-save=${file}`], {});
}

describe('expectations are disjoint regions that cover the space', () => {
  it('outbound: every packet of the space belongs to exactly one expectation', () => {
    const spec = specFromFlags(['--mesh=istio', '--exclude-outbound-cidrs=10.0.0.0/8', '--exclude-interfaces=eth9']);
    const list = outboundExpectations(spec, 'ipv4', atoms, space(1));
    const regions = list.flatMap((e) => e.regions);
    for (let i = 0; i < regions.length; i++)
      for (let j = i + 1; j < regions.length; j++)
        expect(intersect(regions[i] as Region, regions[j] as Region)).toBeUndefined();
    expect(list.map((e) => e.id)).toContain('ipv4/outbound/excluded-cidr');
  });

  it('drop-invalid: the INVALID state is expected dropped, everywhere', () => {
    const spec = specFromFlags(['--mesh=istio', '--drop-invalid']);
    const invalid = inboundExpectations(spec, 'ipv4', atoms, space(1 | 8)).find(
      (e) => e.id === 'ipv4/inbound/invalid-dropped',
    );
    expect(invalid?.expected).toEqual({ kind: 'dropped' });
    expect(invalid?.regions.map((r) => r.ctstates)).toEqual([8]);
  });
});

describe('configuration regions against real dumps', () => {
  const istioDrop = readFileSync(path.join(CORPUS, 'istio/drop-invalid/iptables-nft-save.v4.txt'), 'utf8');
  const linkerd = readFileSync(path.join(CORPUS, 'linkerd/cni-default/iptables-nft-save.v4.txt'), 'utf8');

  it('drop-invalid configured but the DROP missing fails, naming conntrack INVALID', async () => {
    const argv = ['--mesh=istio', '--drop-invalid', '--include-outbound-cidrs=', '--include-inbound-ports='];
    expect((await explainFile(istioDrop, argv)).exitCode).toBe(0);
    const result = await explainFile(istioDrop.replace('-A ISTIO_DROP -j DROP\n', ''), argv);
    expect(result.exitCode).toBe(126);
    expect(result.stdout).toContain('conntrack INVALID');
    expect(result.stdout).toContain('expected dropped');
  });

  it('an excluded outbound range the rules do not exclude fails, naming the range', async () => {
    const result = await explainFile(linkerd, ['--mesh=linkerd', '--exclude-outbound-cidrs=10.0.0.0/8']);
    expect(result.exitCode).toBe(95);
    expect(result.stdout).toContain('outbound TCP to 10.0.0.0/8');
    expect(result.stdout).toContain('expected not redirected because excluded outbound ranges are not captured');
  });

  it('an excluded inbound source the rules do not exclude fails, naming the range', async () => {
    const result = await explainFile(linkerd, ['--mesh=linkerd', '--exclude-inbound-cidrs=192.168.0.0/16']);
    expect(result.exitCode).toBe(95);
    expect(result.stdout).toContain('inbound TCP from 192.168.0.0/16');
  });

  it('an excluded interface wildcard is a region: `eth+` excluded but redirected fails, naming it', async () => {
    const result = await explainFile(linkerd, ['--mesh=linkerd', '--exclude-interfaces=eth+']);
    expect(result.exitCode).toBe(95);
    expect(result.stdout).toContain('via eth+ (other)');
  });
});
