import { Document, isMap, isScalar } from 'yaml';
import type { Mesh } from '../config/interception.js';
import { eventRbacDocuments } from './event-rbac.js';
import { NO_CPU_LIMIT_COMMENT } from './resources.js';
import { validatorContainer, type ValidatorOptions } from './validator-container.js';

export interface ManifestOptions extends ValidatorOptions {
  readonly nativeSidecar: boolean;
  readonly namespace: string;
  readonly serviceAccount: string;
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
    ` Native sidecars: put this container FIRST in initContainers, before the ${mesh === 'istio' ? 'istio-proxy' : mesh === 'linkerd' ? 'linkerd-proxy' : 'proxy'}`,
    " container that has restartPolicy: Always. It binds the proxy's redirect port to prove",
    ' interception, so it must run while that port is free; `interlock inject` checks this order.',
  ].join('\n');

/** The documents `interlock manifest` prints: the init container, then the Event RBAC when asked. */
export function manifestDocuments(options: ManifestOptions): ManifestDocument[] {
  const header = [
    ` Interlock init container for ${options.mesh}: add it under spec.initContainers.`,
    ...(options.reportEvent
      ? [` The pod must run as serviceAccountName: ${options.serviceAccount} (RBAC below) for the failure Event.`]
      : []),
  ].join('\n');
  const container: ManifestDocument = {
    value: validatorContainer(options),
    comment: options.nativeSidecar ? `${header}\n${NATIVE_SIDECAR_COMMENT(options.mesh)}` : header,
    keyComments: { resources: NO_CPU_LIMIT_COMMENT },
  };
  const rbac = options.reportEvent ? eventRbacDocuments(options).map((value) => ({ value })) : [];
  return [container, ...rbac];
}

export function renderYaml(documents: readonly ManifestDocument[]): string {
  return documents
    .map((document) => {
      const doc = new Document(document.value);
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

/** JSON has no comments: one object, or an array when there are several documents. */
export function renderJson(documents: readonly ManifestDocument[]): string {
  const values = documents.map((document) => document.value);
  return `${JSON.stringify(values.length === 1 ? values[0] : values, null, 2)}\n`;
}
