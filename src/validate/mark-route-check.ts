import type { Family } from '../addr/ip.js';
import type { InterceptionSpec } from '../config/interception.js';
import { describeMarkRule, markRouteFindings } from '../network/mark-route.js';
import type { PodNetwork } from '../network/pod-network.js';
import type { RulesInspectionResult } from './rules-port.js';

/**
 * Rules that pass still deliver nothing where they rely on a policy route (Istio ambient's TPROXY
 * and restored marks: `ip rule fwmark 0x111/0xfff lookup 100`, table 100's local default route):
 * a pass of the rules check holds only with that route read (rtnetlink) and whole. A failure of
 * the rules themselves comes first; a mesh without a mark route is left as it was.
 */
export function withMarkRoute(
  spec: InterceptionSpec,
  network: PodNetwork,
  families: readonly Family[],
  inspection: RulesInspectionResult,
): RulesInspectionResult {
  const route = spec.markRoute;
  if (!route || inspection.status !== 'passed') return inspection;
  const rule = `\`${describeMarkRule(route)}\``;
  if (network.rules === undefined) {
    const message = `the rules pass, but the policy route ${rule} was not read`;
    return { ...inspection, status: 'unknown', reason: 'RulesUnknown', message, evidence: [message] };
  }
  const findings = markRouteFindings(network, route, families);
  if (findings.length === 0)
    return {
      ...inspection,
      evidence: [...inspection.evidence, `policy route ${rule} and table ${route.table} in place`],
    };
  const message = `the rules pass but the proxy's marked traffic is not routed to it: ${findings.join('; ')}`;
  return { ...inspection, status: 'failed', reason: 'MarkRouteMissing', message, evidence: findings };
}
