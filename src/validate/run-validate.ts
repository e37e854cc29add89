import type { Family, IpAddress } from '../addr/ip.js';
import type { ValidateConfig } from '../config/validate-config.js';
import { assessPodNetwork, describeFamilyNetwork, type NetworkAssessment } from '../network/assess-pod-network.js';
import type { PodNetwork } from '../network/pod-network.js';
import { planProbes, type ProbeIdentity, type ProbeTarget } from '../probe/probe-plan.js';
import { proveInterception, settleWindowMs } from '../probe/prove-interception.js';
import type { Logger } from '../output/logger.js';
import { failed, passed, type Check } from '../verdict/check.js';
import { decideVerdict, type Verdict } from '../verdict/decide-verdict.js';
import { describeTarget, listenerCheck, PRECEDENCE, probeCheck } from './probe-checks.js';
import type { InspectRules, RulesInspectionResult } from './rules-port.js';

/** Everything `validate` touches outside its own logic, so tests can hand in the real or a fake. */
export interface ValidateEnvironment {
  readonly readPodNetwork: () => Promise<PodNetwork>;
  readonly inspectRules: InspectRules;
  readonly identity: ProbeIdentity;
  readonly logger: Logger;
  readonly signal: AbortSignal;
}

export async function runValidate(config: ValidateConfig, env: ValidateEnvironment): Promise<Verdict> {
  const started = Date.now();
  const deadline = started + config.timeoutMs;
  const settleMs = settleWindowMs(config.timeoutMs);
  const { logger, signal } = env;
  const checks: Check[] = [];
  const interruption = (): string | undefined => (signal.aborted ? String(signal.reason ?? 'a signal') : undefined);

  const { network, assessment } = await waitForPodNetwork(config, env, Math.min(deadline, started + settleMs));
  logger.debug({ network: summarizeNetwork(network) }, 'pod network read through rtnetlink');
  if (assessment.problems.length > 0) {
    checks.push(failed('pod-network', 'PodNetworkMissing',
      `the pod network is not set up (the primary CNI did not run or did not finish): ${assessment.problems.join('; ')}`,
      [describeFamilyNetwork(assessment.perFamily.ipv4), describeFamilyNetwork(assessment.perFamily.ipv6)], 'validation', PRECEDENCE.network));
    return decideVerdict(checks, interruption());
  }
  checks.push(passed('pod-network', assessment.familiesToProve.map((family) => describeFamilyNetwork(assessment.perFamily[family])).join('; ')));

  const plan = planProbes({
    spec: config.interception,
    network,
    assessment,
    identity: env.identity,
    overrides: config.probeAddresses,
    probePort: config.probePort,
  });
  if (!plan.ok) {
    const failureClass = plan.problem.kind === 'ProbeUnroutable' && Object.keys(config.probeAddresses).length === 0 ? 'validation' : 'configuration';
    checks.push(failed('probe-plan', plan.problem.kind, plan.problem.message, [], failureClass, PRECEDENCE.configuration));
    return decideVerdict(checks, interruption());
  }
  const samples: Partial<Record<Family, IpAddress>> = {};
  for (const target of plan.targets) if (target.path === 'outbound') samples[target.family] = target.destination;
  logger.info({ targets: plan.targets.map(targetLog) }, 'probing interception');

  const rulesPromise = config.rules === 'off'
    ? Promise.resolve<RulesInspectionResult>({ status: 'not-inspected', message: 'rules inspection is off (--rules off)', evidence: [], report: null })
    : inspectRulesSafely(env.inspectRules, config, assessment, samples, Math.max(100, deadline - Date.now()));

  const probeRun = await proveInterception(plan.targets, { deadline, settleMs, attemptTimeoutMs: 3000, launchIntervalMs: 1000 }, signal, {
    onAttempt: (target, attempt, outcome) => logger.debug({ family: target.family, attempt, outcome: outcome.kind }, 'probe attempt'),
  });
  const rules = await rulesPromise;
  checks.push(rulesCheck(rules, config.rules));
  logger.info({ rules: { status: rules.status, reason: rules.reason, message: rules.message }, report: rules.report }, 'rules inspection');

  if (probeRun.kind === 'listen-failed') {
    checks.push(listenerCheck(probeRun.error));
  } else {
    for (const result of probeRun.results) checks.push(probeCheck(result, config.timeoutMs));
  }
  return decideVerdict(checks, interruption());
}

async function waitForPodNetwork(config: ValidateConfig, env: ValidateEnvironment, until: number): Promise<{ network: PodNetwork; assessment: NetworkAssessment }> {
  // The kubelet starts init containers after CNI ADD returned, so the network is normally
  // complete; a short settle covers IPv6 addresses still finishing duplicate address detection.
  for (;;) {
    const network = await env.readPodNetwork();
    const assessment = assessPodNetwork(network, config.family);
    if (assessment.problems.length === 0 || Date.now() >= until || env.signal.aborted) return { network, assessment };
    await new Promise((resolve) => setTimeout(resolve, Math.min(200, Math.max(0, until - Date.now()))));
  }
}

async function inspectRulesSafely(
  inspect: InspectRules,
  config: ValidateConfig,
  assessment: NetworkAssessment,
  samples: Partial<Record<Family, IpAddress>>,
  timeoutMs: number,
): Promise<RulesInspectionResult> {
  try {
    return await inspect(config.interception, {
      families: assessment.familiesToProve,
      mode: config.rules === 'required' ? 'required' : 'auto',
      timeoutMs,
      sampleDestinations: samples,
    });
  } catch (error) {
    // Fail closed: an engine fault is an unknown answer, never a silent pass.
    return { status: 'unknown', reason: 'RulesEngineError', message: `the rules engine failed: ${(error as Error).message}`, evidence: [], report: null };
  }
}

function rulesCheck(result: RulesInspectionResult, mode: ValidateConfig['rules']): Check {
  const required = mode === 'required';
  switch (result.status) {
    case 'passed':
      return { ...passed('rules', result.message, result.evidence), required };
    case 'failed':
    case 'unknown':
      // An engine exception is a bug in the validator (exit 70), not a verdict on the pod.
      if (result.reason === 'RulesEngineError') return failed('rules', result.reason, result.message, result.evidence, 'internal', PRECEDENCE.rules);
      return failed('rules', result.reason ?? (result.status === 'failed' ? 'RulesMismatch' : 'RulesUnknown'), result.message, result.evidence, 'validation', PRECEDENCE.rules);
    case 'unreadable':
      if (required) return failed('rules', result.reason ?? 'RulesUnreadable', result.message, result.evidence, 'validation', PRECEDENCE.rules);
      return { name: 'rules', status: 'not-inspected', reason: result.reason, message: result.message, evidence: result.evidence, required: false };
    default:
      if (required) return failed('rules', 'RulesUnreadable', result.message, result.evidence, 'validation', PRECEDENCE.rules);
      return { name: 'rules', status: 'not-inspected', reason: result.reason, message: result.message, evidence: result.evidence, required: false };
  }
}

function targetLog(target: ProbeTarget): Record<string, unknown> {
  return { family: target.family, path: target.path, destination: describeTarget(target), expectedPort: target.expectedPort, via: target.via };
}

function summarizeNetwork(network: PodNetwork): Record<string, unknown> {
  return { links: network.links.map((link) => `${link.name}${link.up ? '' : '(down)'}`), addresses: network.addresses.length, routes: network.routes.length };
}
