import type { PodSecurityLevel } from '../kube/pod-security-check.js';
import {
  admits,
  namespacePodSecurity,
  POD_SECURITY_LABEL,
  type NamespacePodSecurity,
} from '../kube/pod-security-labels.js';
import { podSecurityLevel, type PodSecurityVerdict } from '../kube/pod-security-level.js';
import { installCheck, type InstallCheckResult } from './install-check-result.js';
import { at, list, record, text } from './json-path.js';
import { installTargets, judgedMeshes, meshedTargets, type PodSecurityTarget } from './pod-security-targets.js';
import type { PreflightSnapshot } from './preflight-snapshot.js';
import { unreadable } from './webhook-checks.js';

/** What the pod needs, and why: the first violation of the next stricter level. */
function needs(verdict: PodSecurityVerdict): string {
  const why =
    verdict.level === 'privileged'
      ? verdict.violations.baseline
      : verdict.level === 'baseline'
        ? verdict.violations.restricted
        : undefined;
  return `needs ${verdict.level}${why === undefined ? '' : ` (${why.sentence})`}`;
}

const label = (namespace: string, key: string, level: PodSecurityLevel) =>
  `kubectl label namespace ${namespace} ${key}=${level} --overwrite`;

/** The namespace's own labels judged: fail when enforce refuses, warn when warn or audit would flag. */
function judgeExisting(target: PodSecurityTarget, policy: NamespacePodSecurity, verdict: PodSecurityVerdict) {
  const id = `pod-security.${target.part}`;
  const ns = `Namespace ${target.namespace}`;
  const version = policy.enforceVersion
    ? `; enforce-version ${policy.enforceVersion}, judged by the latest checks`
    : '';
  if (!admits(policy.enforce, verdict.level)) {
    const written =
      policy.invalidEnforce === undefined ? '' : ` (its label says ${policy.invalidEnforce}: not a level)`;
    const relabel = target.creates
      ? `; applying ${target.creates.by} would overwrite the label with ${target.creates.enforce}, so label it yourself if that is meant`
      : '';
    return installCheck(
      'preflight',
      id,
      'fail',
      `${ns} enforces PodSecurity ${policy.enforce}${written}${version}: it refuses ${target.object}, which ${needs(verdict)}${relabel}`,
      `${label(target.namespace, POD_SECURITY_LABEL.enforce, verdict.level)}${target.otherwise ? `  # ${target.otherwise}` : ''}`,
    );
  }
  const flags = (['warn', 'audit'] as const).find((mode) => !admits(policy[mode], verdict.level));
  if (flags !== undefined)
    return installCheck(
      'preflight',
      id,
      'warn',
      `${ns} admits ${target.object} (enforce ${policy.enforce}${version}), but its ${flags} level ${policy[flags]} flags it: it ${needs(verdict)}`,
      label(target.namespace, POD_SECURITY_LABEL[flags], verdict.level),
    );
  return installCheck(
    'preflight',
    id,
    'pass',
    `${ns} (enforce ${policy.enforce}${version}) admits ${target.object}, which ${needs(verdict)}`,
  );
}

function judgeTarget(target: PodSecurityTarget, namespace: unknown): InstallCheckResult {
  const verdict = podSecurityLevel(target.pod);
  if (namespace !== undefined)
    return judgeExisting(target, namespacePodSecurity(record(at(namespace, 'metadata', 'labels'))), verdict);
  const creates = target.creates ?? { by: 'nothing', enforce: 'privileged' };
  const policy = namespacePodSecurity({ [POD_SECURITY_LABEL.enforce]: creates.enforce });
  const admitted = admits(policy.enforce, verdict.level);
  return installCheck(
    'preflight',
    `pod-security.${target.part}`,
    admitted ? 'pass' : 'fail',
    `Namespace ${target.namespace} does not exist yet: ${creates.by} creates it with ${POD_SECURITY_LABEL.enforce}=${creates.enforce}, which ${admitted ? 'admits' : 'refuses'} ${target.object}, which ${needs(verdict)}`,
  );
}

/**
 * Both parts in one namespace: each output prints that Namespace with its own enforce label, so
 * the one applied last decides, and the webhook's restricted refuses the agent's next pods.
 */
function sharedNamespaceCheck(targets: readonly PodSecurityTarget[]): InstallCheckResult[] {
  const agent = targets.find((target) => target.part === 'node-agent');
  const webhook = targets.find((target) => target.part === 'webhook');
  if (!agent?.creates || !webhook?.creates || agent.namespace !== webhook.namespace) return [];
  if (agent.creates.enforce === webhook.creates.enforce) return [];
  return [
    installCheck(
      'preflight',
      'pod-security.shared-namespace',
      'fail',
      `the node agent and the webhook share Namespace ${agent.namespace}: ${agent.creates.by} labels it ${POD_SECURITY_LABEL.enforce}=${agent.creates.enforce} and ${webhook.creates.by} ${webhook.creates.enforce}, so the output applied last decides, and ${webhook.creates.enforce} refuses ${agent.object}, which ${needs(podSecurityLevel(agent.pod))}`,
      'give each part a namespace of its own (--node-namespace and --webhook-namespace here, manifest --namespace)',
    ),
  ];
}

/**
 * `check --pre`'s PodSecurity: each pod the install will create (the agent's DaemonSet, the
 * webhook's Deployment, printed with the plan's flags) and Interlock's validator in each namespace
 * the mesh meshes, judged by the Pod Security Standards against its namespace's labels.
 */
export function podSecurityChecks(snapshot: PreflightSnapshot): InstallCheckResult[] {
  if (snapshot.namespaces.state !== 'found')
    return [unreadable('preflight', 'pod-security', 'the namespaces', snapshot.namespaces)];
  const namespaces = list(at(snapshot.namespaces.value, 'items'));
  const byName = (name: string) => namespaces.find((item) => text(at(item, 'metadata', 'name')) === name);
  const meshed = meshedTargets(snapshot.plan, snapshot.namespaces.value);
  const install = installTargets(snapshot.plan);
  const results = [
    ...[...install, ...meshed].map((target) => judgeTarget(target, byName(target.namespace))),
    ...sharedNamespaceCheck(install),
  ];
  const { mesh } = snapshot.plan;
  if (meshed.length > 0 || mesh === undefined || judgedMeshes(snapshot.plan).length === 0) return results;
  return [
    ...results,
    installCheck(
      'preflight',
      'pod-security.meshed',
      'skip',
      `no namespace is meshed by ${mesh} yet: Interlock's validator in its pods is judged once one is`,
    ),
  ];
}
