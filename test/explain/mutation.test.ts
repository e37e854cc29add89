import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { prng } from '../harness/prng.js';
import { dumpSets, explainArgv, flagsFor, loadManifest, type CorpusCase, type DumpSet } from './corpus.js';
import {
  benign,
  blanketReturnFirst,
  changeRedirectPort,
  dropProxyUidExclusion,
  nftMutants,
  removeOutputJump,
  type Mutant,
} from './mutants.js';

const cases = loadManifest();
const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-mutants-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;

function flagValue(argv: readonly string[], name: string): string {
  const prefix = `--${name}=`;
  return argv.find((arg) => arg.startsWith(prefix))?.slice(prefix.length) ?? '';
}

/** Runs explain with one file of the set replaced by `text`. */
async function explainWith(testCase: CorpusCase, set: DumpSet, flag: string, text: string) {
  const file = path.join(scratch, `${counter++}.txt`);
  writeFileSync(file, text);
  const replaced: DumpSet = { ...set, files: set.files.map(([f, p]) => [f, f === flag ? file : p] as const) };
  return runExplain(explainArgv(testCase, replaced), {});
}

async function expectKilled(testCase: CorpusCase, set: DumpSet, flag: string, mutant: Mutant): Promise<void> {
  const result = await explainWith(testCase, set, flag, mutant.text);
  expect(result.stderr).toBe('');
  expect(result.exitCode).not.toBe(0);
  expect(result.stdout).toMatch(/FAILED|UNKNOWN/);
  expect(result.stdout).toContain(mutant.mustName);
}

describe('mutants of every corpus case fail, naming the mutated rule', () => {
  for (const testCase of cases) {
    const { argv } = flagsFor(testCase);
    const inboundPort = Number(flagValue(argv, 'inbound-port') || (testCase.mesh === 'linkerd' ? 4143 : 15006));
    const proxyUid = (flagValue(argv, 'proxy-uid') || '1337').split(',')[0] as string;
    for (const set of dumpSets(testCase)) {
      const label = `${testCase.dir} (${set.name})`;
      if (set.name === 'nftables') {
        const file = set.files[0]?.[1] as string;
        for (const { name, mutant } of nftMutants(readFileSync(file, 'utf8'), Number(proxyUid), inboundPort)) {
          if (name === 'drop-uid-exclusion') continue; // asked below with the capture condition
          it(`${label}: ${name}`, async () => {
            expect(mutant, `${name} applies to ${label}`).toBeDefined();
            await expectKilled(testCase, set, 'nft-ruleset', mutant as Mutant);
          });
        }
        continue;
      }
      const [flag, file] = set.files[0] as readonly [string, string];
      const text = readFileSync(file, 'utf8');
      const mesh = testCase.mesh === 'linkerd' ? 'PROXY_INIT_OUTPUT' : 'ISTIO_OUTPUT';
      const mutants: Array<[string, Mutant | undefined]> = [
        ['remove the jump into the mesh chain', removeOutputJump(text)],
        [`change REDIRECT ${inboundPort} to 15999`, changeRedirectPort(text, inboundPort, 15999)],
        ['put a blanket RETURN first in nat OUTPUT', blanketReturnFirst(text, 'OUTPUT')],
        [`put a blanket RETURN first in ${mesh}`, blanketReturnFirst(text, mesh)],
      ];
      for (const [name, mutant] of mutants) {
        it(`${label}: ${name}`, async () => {
          expect(mutant, `${name} applies to ${label}`).toBeDefined();
          await expectKilled(testCase, set, flag, mutant as Mutant);
        });
      }
    }
  }
});

describe('dropping the proxy-uid exclusion', () => {
  // Where outbound capture is off (Istio with no included ranges) nothing would redirect the
  // proxy's traffic anyway: that mutant is equivalent and must still pass, not raise a false alarm.
  for (const testCase of cases) {
    const { argv } = flagsFor(testCase);
    const proxyUid = (flagValue(argv, 'proxy-uid') || (testCase.mesh === 'linkerd' ? '2102' : '1337')).split(
      ',',
    )[0] as string;
    for (const set of dumpSets(testCase)) {
      const label = `${testCase.dir} (${set.name})`;
      it(`${label}: fails where the application's traffic is captured, else is equivalent`, async () => {
        // Captured = some region of application packets (or its DNS) must be redirected outbound;
        // the proxy's own calls over loopback go to its inbound port by design.
        const original = JSON.parse((await runExplain(explainArgv(testCase, set, ['--format=json']), {})).stdout) as {
          expectations: Array<{ id: string; hook: string; expected: string }>;
        };
        const captured = original.expectations.some(
          (e) => e.hook === 'output' && e.expected.startsWith('redirected') && !e.id.includes('proxy-loopback'),
        );
        if (set.name === 'nftables') {
          const file = set.files[0]?.[1] as string;
          const mutant = nftMutants(readFileSync(file, 'utf8'), Number(proxyUid), 15006).find(
            (m) => m.name === 'drop-uid-exclusion',
          )?.mutant;
          expect(mutant).toBeDefined();
          if (captured) await expectKilled(testCase, set, 'nft-ruleset', mutant as Mutant);
          else expect((await explainWith(testCase, set, 'nft-ruleset', (mutant as Mutant).text)).exitCode).toBe(0);
          return;
        }
        const [flag, file] = set.files[0] as readonly [string, string];
        const mutant = dropProxyUidExclusion(readFileSync(file, 'utf8'), proxyUid);
        expect(mutant).toBeDefined();
        if (captured) await expectKilled(testCase, set, flag, mutant as Mutant);
        else expect((await explainWith(testCase, set, flag, (mutant as Mutant).text)).exitCode).toBe(0);
      });
    }
  }
});

describe('benign changes still pass', () => {
  for (const testCase of cases) {
    for (const set of dumpSets(testCase)) {
      if (set.name === 'nftables') continue;
      it(`${testCase.dir} (${set.name}): counters, unrelated chain and rules, comments, a filter table`, async () => {
        const [flag, file] = set.files[0] as readonly [string, string];
        const result = await explainWith(testCase, set, flag, benign(readFileSync(file, 'utf8')));
        expect(result.stderr).toBe('');
        expect(result.stdout).toContain('PASSED');
        expect(result.exitCode).toBe(0);
      });
    }
  }
});

describe('both backends at once', () => {
  for (const testCase of cases.filter((c) => c.dir.startsWith('linkerd/') || c.dir.startsWith('istio-cni/'))) {
    it(`${testCase.dir}: the same rules in legacy and nft agree, and the split is reported`, async () => {
      const sets = dumpSets(testCase);
      const files = sets.flatMap((set) => set.files);
      const result = await runExplain(explainArgv(testCase, { name: 'iptables-nft', files }, ['--format=json']), {});
      const report = JSON.parse(result.stdout) as { status: string; splitAcrossBackends: boolean };
      expect(report.splitAcrossBackends).toBe(true);
      expect(report.status).toBe('passed');
    });
  }
});

/**
 * Region mutants (issue 9): a RETURN matching a random region, inserted anywhere before the
 * capture in a mesh chain, must fail naming that region; the same exclusion added to the
 * configuration must make the dump pass again (where a flag can say it).
 */
const random = prng(9);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const between = (low: number, high: number): number => low + Math.floor(random() * (high - low + 1));

interface RegionMutant {
  readonly chain: 'PROXY_INIT_OUTPUT' | 'PROXY_INIT_REDIRECT';
  readonly rule: string;
  /** What the failure must name. */
  readonly names: string;
  /** Flags that make the configuration exclude the same region; undefined where no flag can. */
  readonly exclusion: ((argv: string[]) => string[]) | undefined;
}

/** Adds `value` to a list flag of the argv (or adds the flag). */
function widen(argv: string[], flag: string, value: string): string[] {
  const prefix = `--${flag}=`;
  const index = argv.findIndex((arg) => arg.startsWith(prefix));
  if (index < 0) return [...argv, `${prefix}${value}`];
  const old = (argv[index] as string).slice(prefix.length);
  return argv.map((arg, i) => (i === index ? `${prefix}${old === '' ? value : `${old},${value}`}` : arg));
}

function randomCidr(): string {
  const prefix = between(8, 28);
  const value = ((between(1, 126) << 24) | between(0, 0xffffff)) >>> 0;
  const base = prefix === 32 ? value : (value & ~((1 << (32 - prefix)) - 1)) >>> 0;
  return `${[24, 16, 8, 0].map((shift) => (base >>> shift) & 255).join('.')}/${prefix}`;
}

function outboundMutant(): RegionMutant {
  const chain = 'PROXY_INIT_OUTPUT';
  switch (pick(['cidr', 'port', 'range', 'uid', 'interface', 'wildcard', 'mark'] as const)) {
    case 'cidr': {
      const cidr = randomCidr();
      return {
        chain,
        rule: `-d ${cidr} -j RETURN`,
        names: `outbound TCP to ${cidr}`,
        exclusion: (argv) => widen(argv, 'exclude-outbound-cidrs', cidr),
      };
    }
    case 'port': {
      const port = between(10000, 19999);
      return {
        chain,
        rule: `-p tcp -m tcp --dport ${port} -j RETURN`,
        names: `port ${port}`,
        exclusion: (argv) => widen(argv, 'exclude-outbound-ports', String(port)),
      };
    }
    case 'range': {
      const from = between(21000, 29000);
      const to = from + between(1, 500);
      return {
        chain,
        rule: `-p tcp -m multiport --dports ${from}:${to} -j RETURN`,
        names: `ports ${from}-${to}`,
        exclusion: (argv) => widen(argv, 'exclude-outbound-ports', `${from}-${to}`),
      };
    }
    case 'uid': {
      const uid = between(3000, 60000);
      return {
        chain,
        rule: `-m owner --uid-owner ${uid} -j RETURN`,
        names: `from uid ${uid}`,
        exclusion: (argv) => widen(argv, 'proxy-uid', String(uid)),
      };
    }
    case 'interface':
    case 'wildcard': {
      const name = random() < 0.5 ? `ens${between(1, 9)}` : `wg${between(0, 9)}+`;
      const label = name.endsWith('+') ? `${name} (other)` : name;
      return { chain, rule: `-o ${name} -j RETURN`, names: `via ${label}`, exclusion: undefined };
    }
    case 'mark': {
      const mask = pick([0xff, 0xf00, 0xffff0000, 0xffffffff]);
      const value = (between(1, 0x7fffffff) & mask) >>> 0 || mask;
      const text = mask === 0xffffffff ? `0x${value.toString(16)}` : `0x${value.toString(16)}/0x${mask.toString(16)}`;
      return {
        chain,
        rule: `-m mark --mark 0x${value.toString(16)}/0x${mask.toString(16)} -j RETURN`,
        names: `mark ${text}`,
        exclusion: undefined,
      };
    }
  }
}

function inboundMutant(ports: readonly number[]): RegionMutant {
  const chain = 'PROXY_INIT_REDIRECT';
  if (random() < 0.5) {
    const cidr = randomCidr();
    return {
      chain,
      rule: `-s ${cidr} -j RETURN`,
      names: `inbound TCP from ${cidr}`,
      exclusion: (argv) => widen(argv, 'exclude-inbound-cidrs', cidr),
    };
  }
  const port = pick(ports);
  return {
    chain,
    rule: `-p tcp -m tcp --dport ${port} -j RETURN`,
    names: `to port ${port}`,
    exclusion: (argv) => widen(argv, 'exclude-inbound-ports', String(port)),
  };
}

/** Inserts the rule at a random place among the chain's rules before its last (the capture). */
function insert(text: string, mutant: RegionMutant): string {
  const lines = text.split('\n');
  const positions = lines.flatMap((line, index) => (line.startsWith(`-A ${mutant.chain} `) ? [index] : []));
  const at = positions[Math.floor(random() * Math.max(1, positions.length - 1))] as number;
  lines.splice(at, 0, `-A ${mutant.chain} ${mutant.rule}`);
  return lines.join('\n');
}

/** Runs explain with the given dump files replaced (flag -> text). */
async function run(argv: readonly string[], texts: ReadonlyMap<string, string>) {
  let replaced = [...argv];
  for (const [flag, text] of texts) {
    const file = path.join(scratch, `${Math.random().toString(36).slice(2)}.txt`);
    writeFileSync(file, text);
    replaced = replaced.map((arg) => (arg.startsWith(`--${flag}=`) ? `--${flag}=${file}` : arg));
  }
  return runExplain(replaced, {});
}

/** The mutant in the IPv4 dump, and in the IPv6 one too unless it names an IPv4 address. */
function mutatedDumps(set: DumpSet, mutant: RegionMutant): Map<string, string> {
  const texts = new Map<string, string>();
  for (const [flag, file] of set.files) {
    const text = readFileSync(file, 'utf8');
    const v4Only = /-[ds] \d/.test(mutant.rule);
    if (flag === 'iptables-save' || (flag === 'ip6tables-save' && !v4Only && text.includes(`-A ${mutant.chain} `)))
      texts.set(flag, insert(text, mutant));
  }
  return texts;
}

describe('a RETURN of a random region in the Linkerd cases fails naming the region, and passes once configured', () => {
  for (const testCase of loadManifest().filter((c) => c.mesh === 'linkerd')) {
    const set = dumpSets(testCase).find((s) => s.name === 'iptables-nft');
    if (!set) continue;
    const argv = explainArgv(testCase, set, ['--format=text']);
    const listed = testCase.config['--ports-to-redirect']
      ? String(testCase.config['--ports-to-redirect']).split(',').map(Number)
      : [8080, 443, between(30000, 39999)];
    const mutants = [
      ...Array.from({ length: 10 }, outboundMutant),
      ...Array.from({ length: 4 }, () => inboundMutant(listed)),
    ];
    for (const mutant of mutants) {
      it(`${testCase.dir}: ${mutant.chain} ${mutant.rule}`, async () => {
        const mutated = mutatedDumps(set, mutant);
        const failed = await run(argv, mutated);
        expect(failed.exitCode, failed.stdout).toBe(95);
        expect(failed.stdout).toContain(mutant.names);
        expect(failed.stdout).toContain(mutant.rule.split(' -j ')[0] as string);
        if (!mutant.exclusion) return;
        const configured = await run(mutant.exclusion([...argv]), mutated);
        expect(configured.exitCode, configured.stdout).toBe(0);
      });
    }
  }
});
