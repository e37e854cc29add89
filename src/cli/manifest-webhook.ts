import type { ManifestDocument } from '../inject/manifest.js';
import { fail, ok, type Result } from '../reason/result.js';
import { webhookManifest } from '../webhook/webhook-manifest.js';
import { readInputFile } from './read-input-file.js';

type FlagValues = ReadonlyMap<string, unknown>;

/** The webhook's own namespace unless --namespace names one (manifest's default, `default`, is the validator's). */
const WEBHOOK_NAMESPACE = 'interlock-system';

/** `interlock manifest --webhook`: the documents, with --ca-bundle and --webhook-client-ca read and checked to hold a PEM certificate. */
export function webhookDocuments(values: FlagValues): Result<ManifestDocument[], 'ConfigInvalid'> {
  const caBundlePem = readPem('--ca-bundle', values.get('ca-bundle') as string | undefined);
  if (!caBundlePem.ok) return caBundlePem;
  const clientCaPem = readPem('--webhook-client-ca', values.get('webhook-client-ca') as string | undefined);
  if (!clientCaPem.ok) return clientCaPem;
  const canary = values.get('canary-namespace') as string | undefined;
  const apiServerCidrs = values.get('api-server-cidr') as string[] | undefined;
  const documents = webhookManifest({
    image: values.get('image') as string,
    namespace: (values.get('namespace') as string | undefined) ?? WEBHOOK_NAMESPACE,
    failurePolicy: values.get('failure-policy') as 'Ignore' | 'Fail',
    metricsNamespace: values.get('metrics-namespace') as string,
    ...(caBundlePem.value === undefined ? {} : { caBundlePem: caBundlePem.value }),
    ...(clientCaPem.value === undefined ? {} : { clientCaPem: clientCaPem.value }),
    ...(canary === undefined ? {} : { canaryNamespace: canary }),
    ...(apiServerCidrs === undefined ? {} : { apiServerCidrs }),
  });
  return ok(documents.map((value) => ({ value })));
}

/** A PEM file a flag names, checked to hold a certificate; no flag, no file. */
function readPem(flag: string, path: string | undefined): Result<string | undefined, 'ConfigInvalid'> {
  if (path === undefined) return ok(undefined);
  const read = readInputFile(flag, path, 1024 * 1024);
  if (!read.ok) return fail('ConfigInvalid', read.error.message);
  if (!/-----BEGIN CERTIFICATE-----/.test(read.value))
    return fail('ConfigInvalid', `${flag} ${path}: no PEM certificate in it`);
  return ok(read.value);
}
