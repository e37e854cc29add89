import { randomInt } from 'node:crypto';
import type { Family } from '../addr/ip.js';
import type { ValidateConfig } from '../config/validate-config.js';
import { assessPodNetwork, describeFamilyNetwork, type NetworkAssessment } from '../network/assess-pod-network.js';
import type { PodNetwork } from '../network/pod-network.js';
import { withMarkRoute } from './mark-route-check.js';
import { settleWindowMs, type ProbeResult } from '../probe/probe-loop.js';
import { planProbes, type ProbeIdentity, type ProbePlan, type ProbeTarget } from '../probe/probe-plan.js';
import { proveInterception, type ProbeRun } from '../probe/prove-interception.js';
import type { ProbeTiming, ProbeHooks } from '../probe/probe-loop.js';
import type { Proof } from '../probe/proof.js';
import type { Logger } from '../output/logger.js';
import { probeLogHooks } from './probe-log-hooks.js';
import { failed, passed, type VerdictCheck } from '../verdict/verdict-check.js';
import { decideVerdict, type Verdict } from '../verdict/decide-verdict.js';
import type { ProofObligations } from '../verdict/proof-obligations.js';
import { describeTarget, familyProbeCheck, listenerCheck, PRECEDENCE } from './probe-checks.js';
import { rulesCheck } from './rules-checks.js';
import { ambientFamilyCheck } from './ambient-checks.js';
import { ambientPorts, proveAmbient, type AmbientRun } from './ambient-probe.js';
import type { InspectRules, RulesInspectionResult } from './rules-port.js';
import type { Progress } from './progress.js';

/** Everything `validate` touches outside its own logic, so tests can hand in the real or a fake. */
export interface ValidateEnvironment {
  readonly readPodNetwork: () => Promise<PodNetwork>;
  readonly inspectRules: InspectRules;
  readonly identity: ProbeIdentity;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  /** Monotonic (performance.now()) time by which the verdict is due: a wall-clock step moves neither. */
  readonly deadline: number;
  /** Told each phase and each pending item, so a deadline or a signal can name them. */
  readonly progress: Progress;
  readonly proveInterception?: ProveInterception;
}

/** What the probe phase returned: the sidecar's listener proof, or ambient's socket-table proof. */
type ProbeOutcome = { readonly kind: 'sidecar'; readonly run: ProbeRun } | AmbientRun;

export type ProveInterception = (
  targets: readonly ProbeTarget[],
  timing: ProbeTiming,
  signal: AbortSignal,
  hooks: ProbeHooks,
) => Promise<ProbeRun>;

const ATTEMPT_TIMEOUT_MS = 3000;
const LAUNCH_INTERVAL_MS = 1000;

export async function runValidate(config: ValidateConfig, env: ValidateEnvironment): Promise<Verdict> {
  const started = performance.now();
  const { deadline, progress } = env;
  const settleMs = settleWindowMs(config.timeoutMs);
  const checks: VerdictCheck[] = [];
  const unproven = (): Verdict =>
    decideVerdict({ checks, obligations: undefined, proofs: [], interruptedBy: interruption(env.signal) });

  progress.enter('pod network');
  const { network, assessment } = await waitForPodNetwork(config, env, started + settleMs, deadline);
  env.logger.debug({ network: summarizeNetwork(network) }, 'pod network read through rtnetlink');
  const networkCheck = podNetworkCheck(assessment);
  checks.push(networkCheck);
  if (networkCheck.status !== 'passed') return unproven();

  progress.enter('probe plan');
  const plan = planFor(config, env, network, assessment);
  if (!plan.ok) {
    const failureClass =
      plan.error.kind === 'ProbeUnroutable' && Object.keys(config.probeAddresses).length === 0
        ? 'validation'
        : 'configuration';
    checks.push(failed('probe-plan', plan.error.kind, plan.error.message, [], failureClass, PRECEDENCE.configuration));
    return unproven();
  }
  env.logger.info({ targets: plan.targets.map(targetLog), notes: plan.notes }, 'probing interception');

  const gathered = await readRulesAndProbe(config, env, { assessment, network }, plan.targets, settleMs);
  progress.enter('verdict');
  return concludeVerdict(config, env, { checks, assessment, plan, ...gathered });
}

const interruption = (signal: AbortSignal): string | undefined =>
  signal.aborted ? String(signal.reason ?? 'a signal') : undefined;

/** What the run gathered up to the verdict: the checks before the probe, its plan and its results. */
interface Gathered {
  readonly checks: readonly VerdictCheck[];
  readonly assessment: NetworkAssessment;
  readonly plan: Extract<ProbePlan, { ok: true }>;
  readonly probe: ProbeOutcome;
  readonly rules: RulesInspectionResult;
}

/** The "verdict" phase: the rules read and the probe, with the checks before them, to the one verdict. */
function concludeVerdict(config: ValidateConfig, env: ValidateEnvironment, gathered: Gathered): Verdict {
  const { assessment, plan, probe, rules } = gathered;
  const checks = [...gathered.checks, rulesCheck(rules, config.rules)];
  env.logger.info(
    { rules: { status: rules.status, reason: rules.reason, message: rules.message }, report: rules.report },
    'rules inspection',
  );

  const proofs: Proof[] = [];
  if (probe.kind === 'ambient') {
    const ports = ambientPorts(config.interception);
    for (const family of assessment.familiesToProve) {
      const results = probe.results.filter((result) => result.target.family === family);
      checks.push(ambientFamilyCheck(family, results, ports, config.timeoutMs));
    }
    for (const result of probe.results) if (result.proof) proofs.push(result.proof);
  } else if (probe.run.kind === 'listen-failed') {
    checks.push(listenerCheck(probe.run.error));
  } else {
    checks.push(...familyChecks(assessment.familiesToProve, probe.run.results, config.timeoutMs));
    for (const result of probe.run.results) if (result.proof) proofs.push(result.proof);
  }
  // Not required (the pod's own path was proven), and never a pass: the verdict says what was not tried.
  for (const path of plan.unprobed)
    checks.push({
      name: `probe-path-${path.path}`,
      status: 'not-run',
      message: path.message,
      evidence: [],
      required: false,
    });
  const obligations: ProofObligations = {
    families: assessment.familiesToProve,
    targets: plan.targets,
    rulesRequired: config.rules === 'required',
  };
  return decideVerdict({ checks, obligations, proofs, interruptedBy: interruption(env.signal) });
}

/** The rules read and the probe, concurrently, each named as pending until it is back. */
async function readRulesAndProbe(
  config: ValidateConfig,
  env: ValidateEnvironment,
  { assessment, network }: { assessment: NetworkAssessment; network: PodNetwork },
  targets: readonly ProbeTarget[],
  settleMs: number,
): Promise<{ probe: ProbeOutcome; rules: RulesInspectionResult }> {
  const { deadline, progress } = env;
  progress.enter('rules read and probe');
  const rulesRead = config.rules === 'off' ? () => undefined : progress.pending('the rules read');
  const rulesPromise = inspectRulesSafely(
    env.inspectRules,
    config,
    { assessment, network },
    Math.max(100, deadline - performance.now()),
  ).finally(rulesRead);
  const probed = targets.map((target) => progress.pending(`the ${describeProbe(target)}`));
  const probe: ProbeOutcome =
    config.interception.dataplane === 'ambient'
      ? await proveAmbient(config.interception, targets, deadline, env.signal, env.logger)
      : {
          kind: 'sidecar',
          run: await (env.proveInterception ?? proveInterception)(
            targets,
            { deadline, settleMs, attemptTimeoutMs: ATTEMPT_TIMEOUT_MS, launchIntervalMs: LAUNCH_INTERVAL_MS },
            env.signal,
            probeLogHooks(env.logger),
          ),
        };
  for (const done of probed) done();
  return { probe, rules: await rulesPromise };
}

function podNetworkCheck(assessment: NetworkAssessment): VerdictCheck {
  if (assessment.problems.length > 0) {
    return failed(
      'pod-network',
      'PodNetworkMissing',
      `the pod network is not set up (the primary CNI did not run or did not finish): ${assessment.problems.join('; ')}`,
      [describeFamilyNetwork(assessment.perFamily.ipv4), describeFamilyNetwork(assessment.perFamily.ipv6)],
      'validation',
      PRECEDENCE.network,
    );
  }
  return passed(
    'pod-network',
    assessment.familiesToProve.map((family) => describeFamilyNetwork(assessment.perFamily[family])).join('; '),
  );
}

function planFor(
  config: ValidateConfig,
  env: ValidateEnvironment,
  network: PodNetwork,
  assessment: NetworkAssessment,
): ProbePlan {
  const plan = planProbes({
    spec: config.interception,
    network,
    assessment,
    identity: env.identity,
    probeAddresses: config.probeAddresses,
    probeAddressHints: config.probeAddressHints,
    probePort: config.probePort,
    // A port the rules' author cannot guess: a RETURN for a range of ports would have to cover it.
    randomPort: randomInt(1025, 65536),
    probeSpread: config.probeSpread,
    random: Math.random,
  });
  return plan.ok ? { ...plan, notes: [...plan.notes, config.probeSpreadWhy] } : plan;
}

function familyChecks(families: readonly Family[], results: readonly ProbeResult[], timeoutMs: number): VerdictCheck[] {
  return families.map((family) =>
    familyProbeCheck(
      family,
      results.filter((result) => result.target.family === family),
      timeoutMs,
    ),
  );
}

/**
 * The kubelet starts init containers after CNI ADD returned, so the network is normally complete
 * and a missing one fails within the settle window. An IPv6 address still in duplicate address
 * detection is different: it is waited for up to the deadline, then proven or failed.
 */
async function waitForPodNetwork(
  config: ValidateConfig,
  env: ValidateEnvironment,
  settleUntil: number,
  deadline: number,
): Promise<{ network: PodNetwork; assessment: NetworkAssessment }> {
  for (;;) {
    const network = await env.readPodNetwork().finally(env.progress.pending('the rtnetlink read of the pod network'));
    const assessment = assessPodNetwork(network, config.family);
    const until = assessment.pending ? deadline : settleUntil;
    const now = performance.now();
    if (assessment.problems.length === 0 || now >= until || env.signal.aborted) return { network, assessment };
    await new Promise((resolve) => setTimeout(resolve, Math.min(200, Math.max(0, until - now))));
  }
}

async function inspectRulesSafely(
  inspect: InspectRules,
  config: ValidateConfig,
  { assessment, network }: { assessment: NetworkAssessment; network: PodNetwork },
  timeoutMs: number,
): Promise<RulesInspectionResult> {
  if (config.rules === 'off')
    return { status: 'not-inspected', message: 'rules inspection is off (--rules off)', evidence: [], report: null };
  try {
    return await inspect(config.interception, {
      families: assessment.familiesToProve,
      mode: config.rules === 'required' ? 'required' : 'auto',
      timeoutMs,
    }).then((inspection) => withMarkRoute(config.interception, network, assessment.familiesToProve, inspection));
  } catch (error) {
    // Fail closed: an engine fault is an unknown answer, never a silent pass.
    return {
      status: 'unknown',
      reason: 'RulesEngineError',
      message: `the rules engine failed: ${(error as Error).message}`,
      evidence: [],
      report: null,
    };
  }
}

function describeProbe(target: ProbeTarget): string {
  return `${target.family === 'ipv4' ? 'IPv4' : 'IPv6'} probe to ${describeTarget(target)}`;
}

function targetLog(target: ProbeTarget): Record<string, unknown> {
  return {
    family: target.family,
    path: target.path,
    ...(target.as ? { as: target.as } : {}),
    destination: describeTarget(target),
    expectedPort: target.expectedPort,
    via: target.via,
  };
}

function summarizeNetwork(network: PodNetwork): Record<string, unknown> {
  return {
    links: network.links.map((link) => `${link.name}${link.up ? '' : '(down)'}`),
    addresses: network.addresses.length,
    routes: network.routes.length,
  };
}
