import { stringify } from 'yaml';
import { VERSION } from '../../../config/version.js';
import type { ManifestDocument } from '../../../inject/manifest.js';
import { interlockLabels, type Component } from '../../../kube/interlock-labels.js';

/**
 * What `manifest --node-agent`, `--webhook`, `--rbac` and `--monitoring` installed, printed with
 * them as one ConfigMap: the command line that printed it and every object it printed (itself
 * included), as stubs `kubectl delete -f -` takes. An uninstall reads it back and needs no memory
 * of the flags (docs/operator.md). Helm keeps the same record for the chart: its release.
 */
export const INSTALL_RECORD_NAME = 'interlock-install';

export interface InstallRecordInput {
  readonly component: Component;
  /** manifest's words as given, after `interlock manifest`. */
  readonly argv: readonly string[];
  /** The flags a variable gave (`INTERLOCK_MESH=linkerd`): part of what was installed too. */
  readonly environment: readonly string[];
  readonly documents: readonly ManifestDocument[];
}

type Meta = { name?: unknown; namespace?: unknown };

const metaOf = (value: Record<string, unknown>): Meta => value['metadata'] ?? {};

/** A word as a POSIX shell reads it back: bare when safe, else single-quoted. */
const shellWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

/** The namespace the record lives in: that of the first namespaced object (or the Namespace) printed. */
function recordNamespace(documents: readonly ManifestDocument[]): string | undefined {
  for (const { value } of documents) {
    const meta = metaOf(value);
    if (typeof meta.namespace === 'string') return meta.namespace;
    if (value['kind'] === 'Namespace' && typeof meta.name === 'string') return meta.name;
  }
  return undefined;
}

/** An object as `kubectl delete -f` needs it: its type and its name. */
function stub(value: Record<string, unknown>): Record<string, unknown> {
  const meta = metaOf(value);
  return {
    apiVersion: value['apiVersion'],
    kind: value['kind'],
    metadata: { name: meta.name, ...(typeof meta.namespace === 'string' ? { namespace: meta.namespace } : {}) },
  };
}

/**
 * manifest's words without --image and its value: the image lives in the workloads, where
 * kustomize's `images:`, `kubectl set image` or `helm upgrade` change it; a copy here would be
 * left behind, naming an image no longer installed.
 */
function withoutImage(argv: readonly string[]): string[] {
  return argv.filter(
    (word, index) => word !== '--image' && !word.startsWith('--image=') && argv[index - 1] !== '--image',
  );
}

/** The install record for what `documents` holds; undefined when nothing namespaced is printed. */
export function installRecord(input: InstallRecordInput): ManifestDocument | undefined {
  const namespace = recordNamespace(input.documents);
  if (namespace === undefined) return undefined;
  const name = `${INSTALL_RECORD_NAME}-${input.component}`;
  const metadata = { name, namespace, labels: interlockLabels(INSTALL_RECORD_NAME, input.component) };
  const record = { apiVersion: 'v1', kind: 'ConfigMap', metadata };
  // Removed in the reverse of the order applied: the objects inside a Namespace before it.
  const objects = [record, ...[...input.documents].reverse().map(({ value }) => value)].map(stub);
  const data = {
    command: ['interlock', 'manifest', ...withoutImage(input.argv)].map(shellWord).join(' '),
    ...(input.environment.length > 0 ? { environment: input.environment.join('\n') } : {}),
    version: VERSION,
    objects: objects.map((object) => `---\n${stringify(object)}`).join(''),
  };
  return {
    value: { ...record, data },
    comment: ` What this printed, to remove it without its flags: kubectl get configmap ${name} -n ${namespace} -o jsonpath='{.data.objects}' | kubectl delete --ignore-not-found -f -`,
  };
}
