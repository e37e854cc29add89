import type { FlagDef } from '../../../config/flag-def.js';
import type { ParsedFlags } from '../../../config/parsed-flags.js';
import { flagValue } from '../../../config/parsed-flags.js';
import type { PreflightPlan } from '../../../install-check/preflight-snapshot.js';
import { WEBHOOK_NAMESPACE } from '../../../webhook/webhook-manifest.js';
import { NODE_NAMESPACE_FLAG, WEBHOOK_NAMESPACE_FLAG } from '../../flags/part-namespace-flags.js';
import {
  DATA_PLANE_FLAG,
  PRE_CA_BUNDLE_FLAG,
  PRE_FAILURE_POLICY_FLAG,
  PRE_FLAG,
  PRE_IMAGE_FLAG,
  PRE_MESH_FLAG,
  PRE_MONITORING_FLAG,
  PRE_NODE_AGENT_FLAG,
  PRE_RULES_CHECK_FLAG,
  PRE_WEBHOOK_FLAG,
} from './flags.js';

/** What `check` was asked: the install as it is (optionally its data plane), or a preflight of one. */
export type CheckMode =
  | {
      readonly kind: 'install';
      readonly namespaces: { readonly webhook?: string; readonly node?: string };
      readonly dataPlane: boolean;
      /** --image with --data-plane: Interlock's image when no installed part names it (inject alone). */
      readonly image: string | undefined;
    }
  | { readonly kind: 'pre'; readonly plan: PreflightPlan };

const PRE_ONLY: readonly FlagDef<unknown>[] = [
  PRE_MESH_FLAG,
  PRE_CA_BUNDLE_FLAG,
  PRE_FAILURE_POLICY_FLAG,
  PRE_WEBHOOK_FLAG,
  PRE_NODE_AGENT_FLAG,
  PRE_RULES_CHECK_FLAG,
];

/** The mode, or the sentence refusing a flag given where it means nothing. */
export function checkMode(parsed: ParsedFlags): CheckMode | string {
  const webhook = flagValue(parsed, WEBHOOK_NAMESPACE_FLAG);
  const node = flagValue(parsed, NODE_NAMESPACE_FLAG);
  const dataPlane = flagValue(parsed, DATA_PLANE_FLAG);
  if (!flagValue(parsed, PRE_FLAG)) {
    const stray = PRE_ONLY.find((flag) => flagValue(parsed, flag) !== undefined);
    if (stray) return `--${stray.name} needs --pre: it describes an install not made yet`;
    if (flagValue(parsed, PRE_MONITORING_FLAG)) return '--monitoring needs --pre: it describes an install not made yet';
    const image = flagValue(parsed, PRE_IMAGE_FLAG);
    if (image !== undefined && !dataPlane) return '--image needs --pre or --data-plane';
    return {
      kind: 'install',
      namespaces: { ...(webhook === undefined ? {} : { webhook }), ...(node === undefined ? {} : { node }) },
      dataPlane,
      image,
    };
  }
  if (dataPlane)
    return '--data-plane and --pre exclude each other: a preflight has no meshed pods of Interlock to check';
  const webhookOnly = flagValue(parsed, PRE_WEBHOOK_FLAG) === true;
  const agentOnly = flagValue(parsed, PRE_NODE_AGENT_FLAG) === true;
  return {
    kind: 'pre',
    plan: {
      mesh: flagValue(parsed, PRE_MESH_FLAG),
      caBundle: flagValue(parsed, PRE_CA_BUNDLE_FLAG) !== undefined,
      monitoring: flagValue(parsed, PRE_MONITORING_FLAG),
      failurePolicy: flagValue(parsed, PRE_FAILURE_POLICY_FLAG),
      webhookNamespace: webhook ?? WEBHOOK_NAMESPACE,
      nodeNamespace: node ?? 'interlock-system',
      image: flagValue(parsed, PRE_IMAGE_FLAG),
      // As manifest prints parts: the ones named, and with neither named, both.
      parts: { webhook: webhookOnly || !agentOnly, nodeAgent: agentOnly || !webhookOnly },
      rulesCheck: flagValue(parsed, PRE_RULES_CHECK_FLAG) === true,
    },
  };
}
