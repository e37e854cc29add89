import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../../test/harness/prng.js';
import type { ContainerdNode } from './containerd-node.js';
import {
  cniCheck,
  nodeBridges,
  observePod,
  predictionOf,
  removeBridges,
  startCniNode,
  type CniCheckRun,
  type Prediction,
} from './cni-node.js';
import { randomCniDir, type GeneratedEntry } from './random-cni-dir.js';

const DIRECTORIES = 60;
const SEED = 20261122;

// ADD-time problems: containerd loads the file and then every pod fails at a plugin.
const ADD_FAILURES = new Set([
  'NetworkNameInvalid',
  'PluginMissing',
  'PluginNotExecutable',
  'PluginNameInvalid',
  'VersionUnsupported',
  'VersionUnknown',
]);

let node: ContainerdNode;
beforeAll(async () => {
  node = await startCniNode();
}, 300_000);
afterAll(async () => {
  await node?.stop();
});

/** What containerd did, observed from the pod: the file whose subnet eth0 got, or the error ctr reported. */
type Observation =
  | {
      readonly kind: 'loads';
      readonly file: string | undefined;
      readonly eth0: string;
      readonly bridges: readonly string[];
    }
  | { readonly kind: 'fails'; readonly error: string };

async function observe(entries: readonly GeneratedEntry[]): Promise<Observation> {
  const { run, eth0 } = await observePod(node);
  if (run.exitCode !== 0) return { kind: 'fails', error: run.stderr.trim() };
  const octets = /^10\.(\d+)\.(\d+)\./.exec(eth0 ?? '');
  const subnet = octets ? (Number(octets[1]) - 100) * 200 + Number(octets[2]) : undefined;
  // Two observations of one fact: the pod's address, and the bridge the network's plugin made in the node.
  return {
    kind: 'loads',
    file: entries.find((entry) => entry.subnet !== undefined && entry.subnet === subnet)?.name,
    eth0: eth0 ?? '(none)',
    bridges: await nodeBridges(node),
  };
}

function agree(
  entries: readonly GeneratedEntry[],
  prediction: Prediction,
  check: CniCheckRun,
  observation: Observation,
): string | undefined {
  const addFailure = check.verdict.findings.find(
    (finding) => finding.severity === 'error' && ADD_FAILURES.has(finding.code),
  );
  if (prediction.kind === 'loads' && !addFailure) {
    if (observation.kind !== 'loads') return `predicted ${prediction.file}, containerd failed: ${observation.error}`;
    if (observation.file !== prediction.file)
      return `predicted ${prediction.file}, the pod got ${observation.eth0} from ${observation.file}`;
    const subnet = entries.find((entry) => entry.name === prediction.file)?.subnet;
    return JSON.stringify(observation.bridges) === JSON.stringify([`ilk-br${subnet}`])
      ? undefined
      : `predicted ${prediction.file} (bridge ilk-br${subnet}), the node has ${observation.bridges.join(', ')}`;
  }
  if (observation.kind !== 'fails')
    return `predicted a failure (${JSON.stringify(check.verdict.findings)}), the pod got ${observation.eth0} from ${observation.file}`;
  if (prediction.kind === 'loads')
    return observation.error.includes(prediction.file) || /failed \(add\)/.test(observation.error)
      ? undefined
      : `predicted an ADD failure in ${prediction.file}, containerd said: ${observation.error}`;
  if (prediction.file === undefined)
    return /no network config found/.test(observation.error)
      ? undefined
      : `predicted no configuration, containerd said: ${observation.error}`;
  return observation.error.includes(`/etc/cni/net.d/${prediction.file}`)
    ? undefined
    : `predicted a load failure on ${prediction.file}, containerd said: ${observation.error}`;
}

describe('prediction equals reality: the file cni-check predicts is the one containerd uses', () => {
  it(`${DIRECTORIES} random configuration directories (seed ${SEED})`, async () => {
    const random = prng(SEED);
    const outcomes: Record<string, number> = {};
    const disagreements: string[] = [];
    for (let index = 0; index < DIRECTORIES; index++) {
      await node.clearConfigs();
      const entries = randomCniDir(random, index * 6);
      for (const entry of entries) {
        if (entry.text === undefined) await mkdir(join(node.confDir, entry.name));
        else await node.writeConfig(entry.name, entry.text);
      }
      const check = await cniCheck(node);
      const prediction = predictionOf(check);
      const observation = await observe(entries);
      await removeBridges(node);
      const problem = agree(entries, prediction, check, observation);
      const key = `${prediction.kind}/${observation.kind}`;
      outcomes[key] = (outcomes[key] ?? 0) + 1;
      if (problem)
        disagreements.push(
          `directory ${index} [${entries.map((entry) => `${entry.name}:${entry.kind}`).join(', ')}]: ${problem}`,
        );
    }
    console.log(`prediction outcomes over ${DIRECTORIES} directories: ${JSON.stringify(outcomes)}`);
    expect(disagreements).toEqual([]);
    // The sample must exercise both sides: directories containerd loads and directories it refuses.
    expect(outcomes['loads/loads'] ?? 0).toBeGreaterThan(15);
    expect(outcomes['fails/fails'] ?? 0).toBeGreaterThan(5);
  }, 900_000);
});
