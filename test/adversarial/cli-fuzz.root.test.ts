import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_FLAGS, commandsOf } from '../../src/cli/all-flags.js';
import { collect, corpusFile, PodNamespace, type Launcher } from '../harness/pod-namespace.js';
import { prng } from '../harness/prng.js';
import { runCommand, STACK_LINE } from './cli-run.js';

// Issue 7, "make the class impossible": whole command lines, random flag sets, values and
// INTERLOCK_* environments, run for real in pods that have NO mesh rules. Nothing may exit 0.
const SEED = 0x5eed_c11;
const VALIDATE_RUNS = 120;
const EXPLAIN_RUNS = 30;
const AT_ONCE = 3;

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

const HUGE = 'x'.repeat(100_000);
const NASTY = [
  '',
  ' ',
  '\u202e',
  '\u0001',
  '\n',
  '\u0007linkerd',
  'linkerd\u202e',
  '--',
  '-1',
  '=',
  ',',
  '*',
  '0',
  '65536',
  '1e3',
  '0x10',
  HUGE,
  `\u202e${HUGE}`,
];
const PLAUSIBLE: Readonly<Record<string, readonly string[]>> = {
  mesh: ['linkerd', 'istio', 'generic', 'LINKERD', 'consul'],
  timeout: ['1s', '2s', '500ms', '150ms', 'soon', '0', '99'],
  'failure-exit-code': ['0', '1', '2', '64', '74', '95', '200', '256'],
  family: ['auto', 'ipv4', 'ipv6', 'dual', 'ipv4,ipv6'],
  rules: ['auto', 'required', 'off'],
  'probe-address': ['192.0.2.1', '0.0.0.0', '127.0.0.1', '::1', '2001:db8::1', '10.0.0.1,10.0.0.2'],
  'probe-address-hint': ['192.0.2.1', '1.1.1.1', '::'],
  'probe-port': ['20001', '4140', '4143', '15006', '1'],
  'inbound-port': ['4143', '15006', '20001', '4140'],
  'outbound-port': ['4140', '15001', '4143'],
  'proxy-uid': ['2102', '65534', '0', '1337'],
};
const SWITCHES = ALL_FLAGS.filter((flag) => flag.kind === 'switch').map((flag) => flag.name);
const VALUE_FLAGS = ALL_FLAGS.filter(
  (flag) => flag.kind === 'value' && commandsOf(flag).includes('validate') && flag.name !== 'termination-log',
).map((flag) => flag.name);

function valueFor(random: Random, name: string): string {
  const plausible = PLAUSIBLE[name];
  return plausible && random() < 0.6 ? pick(random, plausible) : pick(random, NASTY);
}

/** One flag as it may appear on a command line: valid, repeated, a switch given a value, unknown. */
function randomFlag(random: Random): string[] {
  const roll = random();
  if (roll < 0.12) {
    // A switch; help and version only ever with a value (bare, they print and exit 0 by design).
    const name = pick(random, SWITCHES);
    return name === 'help' || name === 'version' || random() < 0.4
      ? [`--${name}=${pick(random, ['false', 'true', '0', ''])}`]
      : [`--${name}`];
  }
  if (roll < 0.18)
    return [`--${pick(random, ['helpx', 'families', 'dns-capture=1.1.1.1', 'x'.repeat(300), 'mesh\u202e'])}`, 'v'];
  if (roll < 0.22) return ['stray'];
  const name = pick(random, VALUE_FLAGS);
  const value = valueFor(random, name);
  return random() < 0.5 ? [`--${name}=${value}`] : [`--${name}`, value];
}

function randomEnv(random: Random): Record<string, string> {
  const env: Record<string, string> = {};
  const count = Math.floor(random() * 4);
  for (let i = 0; i < count; i++) {
    const name = pick(random, [...VALUE_FLAGS, 'help', 'version', 'tproxy', 'dns-capture']);
    env[`INTERLOCK_${name.replace(/-/g, '_').toUpperCase()}`] = pick(random, [
      'true',
      'false',
      '1',
      '0.1.0',
      ...NASTY.slice(0, 8),
      valueFor(random, name),
    ]);
  }
  // Bound every run: a fuzzed --timeout or INTERLOCK_TIMEOUT stays at a few seconds (see PLAUSIBLE).
  env.INTERLOCK_TIMEOUT ??= '2s';
  return env;
}

function randomCommandLine(
  random: Random,
  terminationLogs: readonly string[],
): { argv: string[]; env: Record<string, string> } {
  const argv: string[] = random() < 0.6 ? ['--mesh', pick(random, ['linkerd', 'istio'])] : [];
  const count = Math.floor(random() * 5);
  for (let i = 0; i < count; i++) argv.push(...randomFlag(random));
  const env = randomEnv(random);
  if (random() < 0.3) argv.push('--termination-log', pick(random, terminationLogs));
  // No fuzzed timeout above the bound: an unknown value is rejected, a plausible one is at most 2s.
  return { argv, env };
}

const pods: PodNamespace[] = [];
let terminationLogs: string[] = [];

beforeAll(() => {
  for (let i = 0; i < AT_ONCE; i++) pods.push(PodNamespace.create());
  const tmp = pods[0]?.tmp ?? '/tmp';
  execFileSync('mkfifo', ['-m', '0666', `${tmp}/fifo`]);
  mkdirSync(`${tmp}/dir`);
  symlinkSync(`${tmp}/target`, `${tmp}/link`);
  terminationLogs = [
    `${tmp}/fifo`,
    `${tmp}/dir`,
    `${tmp}/link`,
    '/dev/full',
    '',
    `${tmp}/missing/dir/tl`,
    `${tmp}/\u202e`,
  ];
});

afterAll(() => {
  for (const pod of pods) pod.destroy();
});

async function fuzzValidate(pod: PodNamespace, random: Random, launcher: Launcher, index: number): Promise<void> {
  const { argv, env } = randomCommandLine(random, terminationLogs);
  const child = pod.spawnInterlock(['validate', ...argv], { env, launcher });
  let hung = false;
  const guard = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, 30_000);
  const run = await collect(child, '/dev/null');
  clearTimeout(guard);
  const label = `#${index} seed ${SEED} ${launcher}: ${JSON.stringify({ argv, env }).slice(0, 400)}`;
  expect(hung, label).toBe(false);
  expect(run.exitCode, `${label}\n${run.stderr.slice(0, 400)}`).not.toBe(0);
  expect(run.exitCode, label).not.toBeNull();
  expect(run.stderr, label).not.toMatch(STACK_LINE);
  expect(run.stderr.length, label).toBeLessThan(2000);
}

describe('seeded fuzz of whole command lines: validate in pods with no mesh rules never exits 0', () => {
  it(`${VALIDATE_RUNS} random command lines and environments, the snapshot and the npm bin, ${AT_ONCE} at a time`, async () => {
    const random = prng(SEED);
    for (let start = 0; start < VALIDATE_RUNS; start += AT_ONCE) {
      await Promise.all(
        pods.map((pod, slot) =>
          fuzzValidate(pod, random, (start + slot) % 2 === 0 ? 'snapshot' : 'modules', start + slot),
        ),
      );
    }
  }, 900_000);
});

describe('seeded fuzz of explain on broken and empty dumps: never exits 0', () => {
  it(`${EXPLAIN_RUNS} random command lines over broken dumps`, async () => {
    const random = prng(SEED + 1);
    const tmp = pods[0]?.tmp ?? '/tmp';
    const good = readFileSync(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), 'utf8');
    const dumps = {
      empty: '',
      binary: '\u0000\u0001\u00ff\u202e'.repeat(100),
      cut: good.slice(0, Math.floor(good.length / 3)),
      garbage: '*nat\n-A OUTPUT -j\nCOMMIT\n',
      json: '{"nftables": [',
    };
    for (const [name, text] of Object.entries(dumps)) writeFileSync(`${tmp}/${name}`, text);
    for (let index = 0; index < EXPLAIN_RUNS; index++) {
      const dumpFlag = pick(random, ['--iptables-save', '--ip6tables-save', '--nft-ruleset', '--iptables-legacy-save']);
      const argv = [
        'explain',
        '--mesh',
        pick(random, ['linkerd', 'istio']),
        dumpFlag,
        `${tmp}/${pick(random, Object.keys(dumps))}`,
      ];
      for (let i = Math.floor(random() * 3); i > 0; i--) argv.push(...randomFlag(random));
      const run = await runCommand(argv, { env: randomEnv(random) });
      const label = `#${index}: ${JSON.stringify(argv).slice(0, 300)}`;
      expect(run.hung, label).toBe(false);
      expect(run.exitCode, `${label}\n${run.stderr.slice(0, 300)}`).not.toBe(0);
      expect(run.stderr, label).not.toMatch(STACK_LINE);
    }
  }, 300_000);
});
