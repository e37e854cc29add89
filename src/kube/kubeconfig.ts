import { delimiter, dirname, isAbsolute, resolve } from 'node:path';
import { parse } from 'yaml';
import { fail, ok, type Result } from '../reason/result.js';
import type { ClusterAccess } from './cluster-access.js';
import { MAX_CREDENTIAL_FILE_BYTES, readCredentialFile } from './credential-file.js';

/** All the files of a KUBECONFIG list together: a list of a thousand names is not a thousand reads. */
const MAX_KUBECONFIG_BYTES = 4 * MAX_CREDENTIAL_FILE_BYTES;

type Entry = Record<string, unknown>;

/** One kubeconfig file's named entries; relative paths in it are resolved against its directory. */
interface KubeconfigFile {
  readonly path: string;
  readonly doc: Entry;
}

interface Merged {
  readonly currentContext?: string;
  readonly contexts: Map<string, Entry>;
  readonly clusters: Map<string, { entry: Entry; base: string }>;
  readonly users: Map<string, { entry: Entry; base: string }>;
}

/**
 * KUBECONFIG as the official clients read it: a list of files (`:`-separated); for each named
 * cluster, user and context, and for current-context, the first file that sets it wins; missing
 * files are skipped. exec and auth-provider plugins are refused: an init container cannot wait
 * on a plugin, and a bearer token or client certificate is what a pod has.
 */
export function kubeconfigAccess(kubeconfigEnv: string, context?: string): Result<ClusterAccess, 'KubeUnavailable'> {
  const files: KubeconfigFile[] = [];
  let budget = MAX_KUBECONFIG_BYTES;
  for (const path of kubeconfigEnv.split(delimiter).filter(Boolean)) {
    const read = readCredentialFile('kubeconfig', path, Math.min(budget, MAX_CREDENTIAL_FILE_BYTES));
    // As client-go: a file that does not exist is skipped; any other failure is an error.
    if (!read.ok && read.missing) continue;
    if (!read.ok) return read;
    budget -= read.value.length;
    let doc: unknown;
    try {
      doc = parse(read.value.toString('utf8'));
    } catch (error) {
      return fail('KubeUnavailable', `kubeconfig ${path} does not parse: ${(error as Error).message.split('\n')[0]}`);
    }
    files.push({ path, doc: isEntry(doc) ? doc : {} });
  }
  if (files.length === 0) return fail('KubeUnavailable', `no readable kubeconfig in KUBECONFIG=${kubeconfigEnv}`);
  const merged = merge(files);
  // kubectl's --context: a named context in place of current-context.
  return accessOf(context === undefined ? merged : { ...merged, currentContext: context }, kubeconfigEnv);
}

function merge(files: readonly KubeconfigFile[]): Merged {
  const merged: Merged = { contexts: new Map(), clusters: new Map(), users: new Map() };
  let currentContext: string | undefined;
  for (const { path, doc } of files) {
    const base = dirname(path);
    if (currentContext === undefined && typeof doc['current-context'] === 'string' && doc['current-context'])
      currentContext = doc['current-context'];
    for (const [name, entry] of named(doc.contexts, 'context'))
      if (!merged.contexts.has(name)) merged.contexts.set(name, entry);
    for (const [name, entry] of named(doc.clusters, 'cluster'))
      if (!merged.clusters.has(name)) merged.clusters.set(name, { entry, base });
    for (const [name, entry] of named(doc.users, 'user'))
      if (!merged.users.has(name)) merged.users.set(name, { entry, base });
  }
  return { ...merged, ...(currentContext ? { currentContext } : {}) };
}

function accessOf(config: Merged, origin: string): Result<ClusterAccess, 'KubeUnavailable'> {
  if (!config.currentContext) return fail('KubeUnavailable', `kubeconfig ${origin} sets no current-context`);
  const context = config.contexts.get(config.currentContext);
  if (!context)
    return fail(
      'KubeUnavailable',
      `kubeconfig ${origin}: current-context ${JSON.stringify(config.currentContext)} is not defined`,
    );
  const cluster = config.clusters.get(nameIn(context.cluster));
  if (!cluster || typeof cluster.entry.server !== 'string') {
    return fail(
      'KubeUnavailable',
      `kubeconfig ${origin}: context ${JSON.stringify(config.currentContext)} names cluster ${JSON.stringify(context.cluster)}, which has no server`,
    );
  }
  const user = config.users.get(nameIn(context.user)) ?? { entry: {}, base: cluster.base };
  if (user.entry.exec !== undefined || user.entry['auth-provider'] !== undefined) {
    return fail(
      'KubeUnavailable',
      `kubeconfig ${origin}: user ${JSON.stringify(context.user)} uses an exec or auth-provider plugin, which Interlock does not run; give it a token or a client certificate`,
    );
  }
  const read = readCredentials(cluster, user);
  if (!read.ok) return read;
  return ok({
    server: cluster.entry.server.replace(/\/+$/, ''),
    insecureSkipTlsVerify: cluster.entry['insecure-skip-tls-verify'] === true,
    ...(typeof cluster.entry['tls-server-name'] === 'string'
      ? { tlsServerName: cluster.entry['tls-server-name'] }
      : {}),
    ...(typeof context.namespace === 'string' && context.namespace ? { namespace: context.namespace } : {}),
    ...read.value,
    origin: `kubeconfig ${origin} (context ${config.currentContext})`,
  });
}

type Credentials = Pick<ClusterAccess, 'caData' | 'token' | 'clientCertData' | 'clientKeyData'>;

function readCredentials(
  cluster: { entry: Entry; base: string },
  user: { entry: Entry; base: string },
): Result<Credentials, 'KubeUnavailable'> {
  const caData = dataOrFile(cluster.entry, 'certificate-authority', cluster.base);
  if (!caData.ok) return caData;
  const clientCertData = dataOrFile(user.entry, 'client-certificate', user.base);
  if (!clientCertData.ok) return clientCertData;
  const clientKeyData = dataOrFile(user.entry, 'client-key', user.base);
  if (!clientKeyData.ok) return clientKeyData;
  let token = typeof user.entry.token === 'string' && user.entry.token ? user.entry.token : undefined;
  if (token === undefined && typeof user.entry.tokenFile === 'string') {
    const read = readCredentialFile('tokenFile', resolvePath(user.entry.tokenFile, user.base));
    if (!read.ok) return read;
    token = read.value.toString('utf8').trim();
  }
  return ok({
    ...(caData.value ? { caData: caData.value } : {}),
    ...(clientCertData.value ? { clientCertData: clientCertData.value } : {}),
    ...(clientKeyData.value ? { clientKeyData: clientKeyData.value } : {}),
    ...(token ? { token } : {}),
  });
}

/** `<key>-data` (base64) wins over `<key>` (a path), as in client-go. */
function dataOrFile(entry: Entry, key: string, base: string): Result<Buffer | undefined, 'KubeUnavailable'> {
  const data = entry[`${key}-data`];
  if (typeof data === 'string' && data) return ok(Buffer.from(data, 'base64'));
  const path = entry[key];
  if (typeof path === 'string' && path) return readCredentialFile(key, resolvePath(path, base));
  return ok(undefined);
}

function resolvePath(path: string, base: string): string {
  return isAbsolute(path) ? path : resolve(base, path);
}

function named(list: unknown, field: string): Array<[string, Entry]> {
  if (!Array.isArray(list)) return [];
  return list.flatMap((item): Array<[string, Entry]> => {
    if (!isEntry(item) || typeof item.name !== 'string') return [];
    const inner = item[field];
    return [[item.name, isEntry(inner) ? inner : {}]];
  });
}

/** A context's reference to a cluster or user; names are strings (see named), anything else names nothing. */
function nameIn(reference: unknown): string {
  return typeof reference === 'string' ? reference : '';
}

function isEntry(value: unknown): value is Entry {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
