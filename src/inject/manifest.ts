import { Document, isMap, isScalar } from 'yaml';
import type { CapturedPods } from '../mesh/mesh-identity.js';
import { meshIdentity, type Mesh } from '../mesh/meshes.js';
import { NO_CPU_LIMIT_COMMENT } from './resources.js';
import { podinfoVolume } from './podinfo.js';
import { readsPodInfo, validatorContainer, type ValidatorOptions } from './validator-container.js';

export interface ManifestOptions extends ValidatorOptions {
  readonly nativeSidecar: boolean;
}

/** One printed document: plain data, plus the comments YAML output carries. */
export interface ManifestDocument {
  readonly value: Record<string, unknown>;
  readonly comment?: string;
  /** Comments placed above a top-level key (`resources`: why there is no CPU limit). */
  readonly keyComments?: Readonly<Record<string, string>>;
}

const NATIVE_SIDECAR_COMMENT = (mesh: Mesh) =>
  [
    ` Native sidecars: put this container FIRST in initContainers, before the ${meshIdentity(mesh).containers.proxy ?? 'proxy'}`,
    " container that has restartPolicy: Always. It binds the proxy's redirect port to prove",
    ' interception, so it must run while that port is free; `interlock inject` checks this order.',
  ].join('\n');

/**
 * Ambient captures a pod at its sandbox's creation (or later): the validator goes before every
 * init container of the pod's own, and only into pods ambient captures, or it fails every start.
 */
const capturedComment = (mesh: Mesh, { label, on, off }: CapturedPods): string[] => [
  " Put it FIRST, before the pod's own init containers, and only in pods this mesh captures:",
  ` namespace or pod label ${label}=${on}, pod label not ${off}, no sidecar.`,
  ` \`interlock manifest --webhook --mesh ${mesh}\` adds it to exactly those at admission.`,
];

function capturedLines(mesh: Mesh): string[] {
  const captured = meshIdentity(mesh).capturedPods;
  return captured ? capturedComment(mesh, captured) : [];
}

/** The one document `interlock manifest` prints by default: the init container, to paste under spec.initContainers. */
export function containerDocument(options: ManifestOptions): ManifestDocument {
  const header = [
    ` Interlock init container for ${options.mesh}: add it under spec.initContainers.`,
    ...capturedLines(options.mesh),
    ...(options.reportEvent
      ? [
          " --report-event: the pods' ServiceAccount needs events create/get/patch; apply that RBAC with",
          '   interlock manifest --rbac --namespace NS [--service-account SA] | kubectl apply -f -',
        ]
      : []),
    ...(readsPodInfo(options.mesh)
      ? [
          " It reads the pod's annotations and labels from a downward-API volume; add to spec.volumes:",
          `   ${JSON.stringify(podinfoVolume())}`,
        ]
      : []),
    ...(options.rulesCheck
      ? [
          ' --rules-check runs as uid 0 with NET_ADMIN and NET_RAW: PodSecurity baseline and restricted',
          ' reject it; the namespace needs pod-security.kubernetes.io/enforce=privileged (which admits',
          ' any pod there: host namespaces, hostPath, privileged containers).',
        ]
      : []),
  ].join('\n');
  return {
    value: validatorContainer(options),
    comment: options.nativeSidecar ? `${header}\n${NATIVE_SIDECAR_COMMENT(options.mesh)}` : header,
    keyComments: { resources: NO_CPU_LIMIT_COMMENT },
  };
}

export function renderYaml(documents: readonly ManifestDocument[]): string {
  return documents
    .map((document) => {
      // No anchors: a shared object printed as &a1/*a1 is one inject (and many tools) refuse to edit.
      const doc = new Document(document.value, { aliasDuplicateObjects: false });
      if (document.comment) doc.commentBefore = document.comment;
      if (isMap(doc.contents)) {
        for (const pair of doc.contents.items) {
          const comment = isScalar(pair.key) ? document.keyComments?.[String(pair.key.value)] : undefined;
          if (comment && isScalar(pair.key)) pair.key.commentBefore = comment;
        }
      }
      return doc.toString({ lineWidth: 0 });
    })
    .join('---\n');
}

/**
 * What the YAML says in comments, for JSON output, which has none: the volume to add, the RBAC and
 * PodSecurity a flag needs. Each line is meant for stderr, so stdout stays one JSON value.
 */
export function jsonNotes(command: string, documents: readonly ManifestDocument[]): string {
  const lines = documents.flatMap((document) => (document.comment ? document.comment.split('\n') : []));
  if (lines.length === 0) return '';
  return `interlock ${command}: what the YAML output says in comments (JSON has none):\n${lines.map((line) => ` ${line}\n`).join('')}`;
}

/** JSON has no comments: one object, or a v1 List (what kubectl prints and applies) when there are several. */
export function renderJson(documents: readonly ManifestDocument[]): string {
  const values = documents.map((document) => document.value);
  const value = values.length === 1 ? values[0] : { apiVersion: 'v1', kind: 'List', items: values };
  return `${JSON.stringify(value, null, 2)}\n`;
}
