import { execFileSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';

/**
 * Decodes YAML the way Kubernetes does, offline, with the real kubectl (scripts/ensure-kubectl.sh):
 * `kubectl set env --local` decodes every object into its typed Go struct (a wrong type is an
 * error) and prints it back. A field Kubernetes does not know is dropped silently, so callers
 * compare what comes back with what went in. The marker variable kubectl adds is removed again.
 */
export function kubectlDecode(yamlText: string): Array<Record<string, unknown>> {
  const out = execFileSync('kubectl', ['set', 'env', '--local', '-f', '-', `${MARKER}=1`, '-o', 'yaml'], {
    input: yamlText,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', KUBECONFIG: '/dev/null', HOME: '/nonexistent' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return parseAllDocuments(out).map((doc) => stripMarker(doc.toJS()) as Record<string, unknown>);
}

const MARKER = 'INTERLOCK_KUBECTL_CHECK';

function stripMarker(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value
      .filter((item) => !(typeof item === 'object' && item !== null && (item as { name?: unknown }).name === MARKER))
      .map(stripMarker);
  }
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value)
    .map(([key, inner]) => [key, stripMarker(inner)] as const)
    .filter(([key, inner]) => !(key === 'env' && Array.isArray(inner) && inner.length === 0));
  return Object.fromEntries(entries);
}
