import fastJsonPatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runInject } from '../../src/cli/commands/inject/run.js';
import { runManifest } from '../../src/cli/commands/manifest/run.js';
import { nodeConfigOf } from '../../src/cli/commands/node/config.js';
import { WEBHOOK_COMMAND_FLAGS } from '../../src/cli/commands/webhook/flags.js';
import { compatToValidate } from '../../src/compat/compat-argv.js';
import { parseCommandLine } from '../../src/config/parse-command-line.js';
import { buildValidateConfig, VALIDATE_FLAGS } from '../../src/config/validate-config.js';
import { podPatch } from '../../src/webhook/validator-patch.js';
import { meshPods } from '../../scripts/mesh-pods.mjs';
import { prng } from '../harness/prng.js';

// Issue 35, item 9: every printed artefact is accepted by the command it runs. The printed argv
// and env go through each command's own configuration functions (the ones runCli, runNodeCommand
// and runWebhookCommand call); the pod's downward-API files are run-time data, not configuration.

type Json = Record<string, unknown>;
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const obj = (value: unknown): Json => (value && typeof value === 'object' ? (value as Json) : {});
const VALIDATORS = new Set(['linkerd-network-validator', 'istio-validation', 'interlock']);

/** The process env a container gets (a downward-API value stands for the name the kubelet fills in). */
function envOf(container: Json): Record<string, string> {
  return Object.fromEntries(
    list(container.env)
      .map(obj)
      .map((entry) => [String(entry.name), typeof entry.value === 'string' ? entry.value : 'from-the-downward-api']),
  );
}

/** The refusal of the command the container runs, as that command itself decides it; undefined: accepted. */
function commandRefusal(container: Json): string | undefined {
  const command = container.command === undefined ? undefined : list(container.command).map(String);
  const args = list(container.args).map(String);
  const env = envOf(container);
  if (command?.[0] === 'interlock' && args[0] === 'node') {
    const node = nodeConfigOf(args.slice(1), env);
    return typeof node === 'string' ? node : undefined;
  }
  if (command?.[0] === 'interlock' && args[0] === 'webhook') {
    const webhook = parseCommandLine('webhook', args.slice(1), env, WEBHOOK_COMMAND_FLAGS);
    return webhook.ok ? undefined : webhook.error.message;
  }
  // The image's entrypoint is `interlock validate`; a drop-in argv goes through src/compat first, as in runCli.
  const context = obj(container.securityContext);
  const identity =
    typeof context.runAsUser === 'number'
      ? { uid: context.runAsUser, gid: Number(context.runAsGroup ?? context.runAsUser) }
      : undefined;
  const mapped = compatToValidate([...(command ?? []), ...args], env, identity);
  if (mapped && !mapped.ok) return mapped.error.message;
  const parsed = parseCommandLine('validate', mapped ? mapped.value.slice(1) : args, env, VALIDATE_FLAGS);
  if (!parsed.ok) return parsed.error.message;
  const config = buildValidateConfig(parsed.value);
  return config.ok ? undefined : config.error.message;
}

/** Interlock's containers in printed YAML or JSON: workloads' pod templates, or a bare container. */
function printedContainers(text: string): Json[] {
  const values = text.trimStart().startsWith('{')
    ? [JSON.parse(text) as Json]
    : parseAllDocuments(text).map((doc) => doc.toJS() as Json);
  const documents = values.flatMap((value) => (value.kind === 'List' ? list(value.items).map(obj) : [value]));
  return documents.flatMap((document) => {
    if (document.kind === undefined && typeof document.image === 'string') return [document];
    const pod = obj(obj(obj(document.spec).template).spec);
    const spec = document.kind === 'Pod' ? obj(document.spec) : pod;
    return [...list(spec.initContainers), ...list(spec.containers)]
      .map(obj)
      .filter((c) => VALIDATORS.has(String(c.name)) || list(c.command)[0] === 'interlock');
  });
}

function expectAcceptedOrRefused(
  outcome: { exitCode: number; stdout: string; stderr: string },
  what: string,
  minimum = 1,
): void {
  if (outcome.exitCode === 0) {
    const containers = printedContainers(outcome.stdout);
    expect(containers.length, `${what}: printed containers`).toBeGreaterThanOrEqual(minimum);
    for (const container of containers)
      expect(commandRefusal(container), `${what}: ${String(container.name)}`).toBeUndefined();
  } else {
    expect(outcome.exitCode, `${what}: ${outcome.stderr}`).toBe(64);
    expect(outcome.stderr, what).toMatch(/--[a-z][a-z-]+/);
  }
}

describe('what manifest, inject and the webhook print, the command they run accepts', () => {
  it('manifest --node-agent --mesh generic --cni-audit is refused at print time, naming --mesh-plugin', async () => {
    const outcome = await runManifest(['--node-agent', '--mesh', 'generic', '--cni-audit'], {});
    expect(outcome.exitCode).toBe(64);
    expect(outcome.stderr).toMatch(/--mesh-plugin/);
    const fixed = await runManifest(['--node-agent', '--cni-audit', '--mesh', 'linkerd'], {});
    expectAcceptedOrRefused(fixed, 'with --mesh linkerd');
    expect(fixed.exitCode).toBe(0);
  });

  it('manifest --mesh linkerd --inbound-port 4140 (Linkerd outbound port) is refused, naming the ports', async () => {
    const outcome = await runManifest(['--mesh', 'linkerd', '--inbound-port', '4140'], {});
    expect(outcome.exitCode).toBe(64);
    expect(outcome.stderr).toMatch(/--outbound-port.*--inbound-port/);
  });

  it('inject --mesh linkerd --inbound-port 4140 is refused at print time too', async () => {
    const deployment = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: {name: web}',
      'spec:',
      '  template:',
      '    spec:',
      '      containers: [{name: web, image: nginx}]',
      '',
    ].join('\n');
    const outcome = await runInject(['--mesh', 'linkerd', '--inbound-port', '4140'], {}, () => Buffer.from(deployment));
    expect(outcome.exitCode).toBe(64);
    expect(outcome.stderr).toMatch(/--outbound-port.*--inbound-port/);
  });

  it('inject --mesh generic with ports over an existing generic validator without them prints one that starts', async () => {
    const pod =
      'kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers: [{name: interlock, image: "reg/mesh-interlock:1.0"}]\n  containers: [{name: a, image: b}]\n';
    const outcome = await runInject(
      ['--mesh', 'generic', '--inbound-port', '15006', '--outbound-port', '15001'],
      {},
      () => Buffer.from(pod),
    );
    expect(outcome.exitCode, outcome.stderr).toBe(0);
    expectAcceptedOrRefused(outcome, 'existing generic validator');
  });

  it('manifest --node-agent --node-name x is refused: it would pin every node’s agent to node x', async () => {
    const outcome = await runManifest(['--node-agent', '--mesh', 'linkerd', '--node-name', 'x'], {});
    expect(outcome.exitCode).toBe(64);
    expect(outcome.stderr).toMatch(/--node-name does not apply to manifest --node-agent/);
  });

  it('the webhook leaves a validator whose argv Interlock would refuse as the mesh wrote it, and says so', () => {
    const pod = meshPods().find((candidate) => candidate.validator && candidate.mesh === 'linkerd')!;
    const broken = structuredClone(pod.pod) as Json;
    const inits = list(obj(broken.spec).initContainers).map(obj);
    const validator = inits.find((c) => c.name === 'linkerd-network-validator')!;
    // Linkerd's --listen-addr is the outbound port: the inbound one makes the two equal.
    validator.args = list(validator.args).map((arg) => String(arg).replace(/:4140$/, ':4143'));
    const patch = podPatch(broken, { image: 'mesh-interlock:dev', annotations: {} });
    expect(patch.containers).toEqual([expect.objectContaining({ outcome: 'refused' })]);
    expect(patch.warnings.join('\n')).toMatch(/--outbound-port.*--inbound-port/);
    expect(patch.ops.filter((op) => op.path.startsWith('/spec/initContainers/'))).toEqual([]);
  });
});

describe('property: over the flag space (seeded), printed means accepted, refused means 64 naming a flag', () => {
  const SEED = 35_009;
  const random = prng(SEED);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const maybe = (flag: string, values: readonly (string | undefined)[]): string[] => {
    const value = pick(values);
    return value === undefined ? [] : [flag, value];
  };
  const sw = (flag: string): string[] => (random() < 0.5 ? [flag] : []);
  const PORTS = [
    undefined,
    '4140',
    '4143',
    '15001',
    '15006',
    '15008',
    '1',
    '65535',
    String(1 + Math.floor(random() * 65535)),
  ];
  const MESHES = [undefined, 'linkerd', 'istio', 'generic'];

  const containerFlags = (): string[] => [
    ...maybe('--mesh', MESHES),
    ...maybe('--inbound-port', PORTS),
    ...maybe('--outbound-port', PORTS),
    ...sw('--rules-check'),
    ...sw('--report-event'),
    ...sw('--native-sidecar'),
    ...maybe('--output', [undefined, 'yaml', 'json']),
  ];
  const agentFlags = (): string[] => [
    '--node-agent',
    ...maybe('--mesh', MESHES),
    ...sw('--cni-audit'),
    ...maybe('--mesh-plugin', [undefined, undefined, 'linkerd-cni', 'istio-cni']),
    ...maybe('--action', [undefined, 'delete', 'label', 'none']),
    ...sw('--taint'),
    ...maybe('--breaker-threshold', [undefined, '1', '5', '0']),
    ...maybe('--breaker-min-namespaces', [undefined, '1', '3']),
    ...maybe('--node-name', [undefined, undefined, undefined, 'node-x']),
    ...maybe('--trusted-image', [undefined, 'registry.example/mesh-interlock']),
    ...maybe('--container-name', [undefined, 'interlock', 'istio-validation']),
    ...maybe('--failure-exit-code', [undefined, '95', '126', '64']),
    ...maybe('--listen', [undefined, '0.0.0.0:9477', '127.0.0.1:9090']),
    ...maybe('--watch-namespace', [undefined, 'shop,cart']),
    ...maybe('--image', [undefined, 'registry.example/mesh-interlock:1.0']),
    ...maybe('--output', [undefined, 'json']),
  ];
  const webhookFlags = (): string[] => [
    '--webhook',
    ...maybe('--image', [undefined, 'registry.example/mesh-interlock:1.0']),
    ...maybe('--namespace', [undefined, 'mesh-system']),
    ...maybe('--failure-policy', [undefined, 'Ignore', 'Fail']),
    ...maybe('--output', [undefined, 'json']),
  ];

  it('manifest: the validator (with and without --rules-check), --node-agent and --webhook', async () => {
    const outcomes = { printed: 0, refused: 0 };
    for (let i = 0; i < 400; i++) {
      const argv = pick([containerFlags, containerFlags, agentFlags, webhookFlags])();
      const outcome = await runManifest(argv, {});
      expectAcceptedOrRefused(outcome, `seed ${SEED}, case ${i}: manifest ${argv.join(' ')}`);
      outcomes[outcome.exitCode === 0 ? 'printed' : 'refused']++;
    }
    // Both sides of the property are exercised.
    expect(outcomes.printed).toBeGreaterThan(50);
    expect(outcomes.refused).toBeGreaterThan(50);
  });

  it('inject over a plain Deployment and the meshes’ rendered pods', async () => {
    const plain = 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: app, image: nginx}]\n';
    const rendered = meshPods().filter((pod) => pod.validator);
    const outcomes = { printed: 0, refused: 0 };
    for (let i = 0; i < 150; i++) {
      const input = random() < 0.4 ? plain : JSON.stringify(pick(rendered).pod);
      const argv = [
        ...maybe('--mesh', MESHES),
        ...maybe('--inbound-port', PORTS),
        ...maybe('--outbound-port', PORTS),
        ...sw('--rules-check'),
        ...sw('--report-event'),
      ];
      const outcome = await runInject(argv, {}, () => Buffer.from(input));
      if (outcome.exitCode !== 0 && outcome.exitCode !== 64) {
        // Refusals that are not configuration (a pod inject must not touch: 65) name no flag.
        expect(outcome.exitCode, outcome.stderr).toBe(65);
        continue;
      }
      expectAcceptedOrRefused(outcome, `seed ${SEED}, case ${i}: inject ${argv.join(' ')}`);
      outcomes[outcome.exitCode === 0 ? 'printed' : 'refused']++;
    }
    expect(outcomes.printed).toBeGreaterThan(20);
    expect(outcomes.refused).toBeGreaterThan(20);
  });

  it("the webhook's patch over the meshes' rendered validators with their argv varied", () => {
    const rendered = meshPods().filter((pod) => pod.validator);
    const outcomes = { patched: 0, refused: 0 };
    for (let i = 0; i < 200; i++) {
      const source = pick(rendered);
      const pod = structuredClone(source.pod) as Json;
      const validator = list(obj(pod.spec).initContainers)
        .map(obj)
        .find((c) => VALIDATORS.has(String(c.name)))!;
      validator.args = list(validator.args).map((arg) => {
        const text = String(arg);
        if (random() > 0.15) return text;
        return /^\d+$/.test(text) || /:\d+$/.test(text)
          ? text.replace(/\d+$/, pick(PORTS.filter(Boolean)) as string)
          : text;
      });
      const patch = podPatch(pod, { image: 'mesh-interlock:dev', annotations: {} });
      const patched = fastJsonPatch.applyPatch(pod, patch.ops as fastJsonPatch.Operation[], true, false)
        .newDocument as Json;
      for (const decision of patch.containers) {
        const container = obj(list(obj(patched.spec).initContainers)[decision.index]);
        if (decision.outcome === 'refused') {
          outcomes.refused++;
          expect(patch.warnings.join('\n')).toMatch(
            new RegExp(`${decision.name} left as the mesh wrote it: .*--[a-z]`),
          );
        } else if (decision.outcome !== 'unrecognised') {
          outcomes.patched++;
          expect(commandRefusal(container), `seed ${SEED}, case ${i}: ${source.id}`).toBeUndefined();
        }
      }
    }
    expect(outcomes.patched).toBeGreaterThan(50);
    expect(outcomes.refused).toBeGreaterThan(5);
  });
});
