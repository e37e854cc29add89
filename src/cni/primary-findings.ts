import { chainFindings } from './chain-findings.js';
import type { CniAuditInput } from './cni-audit-input.js';
import type { CniFinding } from './cni-finding.js';
import { meshAttachment } from './mesh-attachment.js';
import { meshFindings } from './mesh-findings.js';
import { podAttachmentFindings } from './pod-attachment-findings.js';
import { defaultNetworkFindings } from './default-network-findings.js';
import { isMultus, multusDelegate, multusNamespaceOf } from './multus-delegate.js';
import { RUNTIME_LABEL, type LoadedNetwork, type RuntimeLoad } from './runtime-load.js';

/** The chain that sets up the pod's primary network, and the mesh plugin's place. */
export interface PrimaryJudgement {
  readonly findings: readonly CniFinding[];
  /** The file Multus delegates the primary network to, when the runtime loads Multus's own. */
  readonly delegate?: LoadedNetwork;
  /** The mesh plugin's own attachment in Multus's directory, when it is not chained. */
  readonly attachment?: string;
}

/**
 * The mesh plugin judged where pods meet it: in the chain the runtime loads, or, when that is
 * Multus's own file, in the chain Multus delegates to; a mesh plugin that runs as an attachment
 * of its own (not chained) is judged as that attachment, never as MeshMissing or MeshFirst.
 */
export function primaryFindings(
  input: CniAuditInput,
  load: Extract<RuntimeLoad, { ok: true }>,
  network: LoadedNetwork,
): PrimaryJudgement {
  const runtime = RUNTIME_LABEL[input.runtime];
  const libcni = input.runtime === 'crio' ? '1.3' : '1.1';
  let judged = network;
  let via: string | undefined;
  const findings: CniFinding[] = [];
  if (isMultus(network)) {
    const delegate = multusDelegate(network, input.listing, load.candidates, libcni, {
      ...(input.multusListing ? { listing: input.multusListing } : {}),
      ...(input.multusApi ? { api: input.multusApi } : {}),
    });
    if (!delegate.ok)
      return {
        findings: [
          {
            code: 'MultusDelegateMissing',
            severity: 'error',
            file: delegate.missing,
            message: `${runtime} loads ${network.file}, Multus's own file: ${delegate.message}; Multus fails every pod's ADD on this node and pods get no sandbox`,
          },
        ],
      };
    judged = delegate.network;
    const target = delegate.inline ? `its inline delegates[0] (network "${judged.list.name}")` : judged.file;
    via = `${runtime} loads ${network.file}, Multus's own file, which delegates the pods' primary network to ${target}`;
    findings.push(...chainFindings(input, judged));
  }
  const mesh = meshFindings(input, load, judged, via);
  const attachment = meshAttachment(input.multusListing, input.meshPlugin, libcni);
  const delegated = via === undefined ? {} : { delegate: judged };
  if (!attachment && via !== undefined)
    findings.push(
      ...defaultNetworkFindings(
        input.multusApi,
        input.meshPlugin,
        multusNamespaceOf(network),
        input.multusListing,
        libcni,
      ),
    );
  if (!attachment || !mesh.every((finding) => isAttachmentShadow(finding, judged, attachment, input)))
    return { findings: [...findings, ...mesh], ...delegated };
  const pods = input.multusApi
    ? podAttachmentFindings(input.multusApi, attachment, input.meshPlugin, input.multusListing, libcni)
    : [];
  return {
    findings: [...findings, ...chainFindings(input, attachment), ...pods],
    ...delegated,
    attachment: attachment.file,
  };
}

/**
 * With the mesh plugin as an attachment of its own, its absence from the primary chain is the
 * design; the mesh plugin first is too when that chain is the attachment itself (the runtime's
 * directory is Multus's). A mesh plugin first in any other chain still fails pods.
 */
function isAttachmentShadow(
  finding: CniFinding,
  judged: LoadedNetwork,
  attachment: LoadedNetwork,
  input: CniAuditInput,
): boolean {
  if (finding.code === 'MeshMissing') return true;
  return finding.code === 'MeshFirst' && `${input.listing.dir}/${judged.file}` === attachment.file;
}
