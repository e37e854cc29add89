import type { ManifestDocument } from '../inject/manifest.js';
import { fail, ok, type Result } from '../reason/result.js';
import { webhookManifest } from '../webhook/webhook-manifest.js';
import { readInputFile } from './read-input-file.js';

type FlagValues = ReadonlyMap<string, unknown>;

/** The webhook's own namespace unless --namespace names one (manifest's default, `default`, is the validator's). */
const WEBHOOK_NAMESPACE = 'interlock-system';

/** `interlock manifest --webhook`: the documents, with --ca-bundle read and checked to hold a PEM certificate. */
export function webhookDocuments(values: FlagValues): Result<ManifestDocument[], 'ConfigInvalid'> {
  const caPath = values.get('ca-bundle') as string | undefined;
  let caBundlePem: string | undefined;
  if (caPath !== undefined) {
    const read = readInputFile('--ca-bundle', caPath, 1024 * 1024);
    if (!read.ok) return fail('ConfigInvalid', read.error.message);
    caBundlePem = read.value;
    if (!/-----BEGIN CERTIFICATE-----/.test(caBundlePem))
      return fail('ConfigInvalid', `--ca-bundle ${caPath}: no PEM certificate in it`);
  }
  const canary = values.get('canary-namespace') as string | undefined;
  const documents = webhookManifest({
    image: values.get('image') as string,
    namespace: (values.get('namespace') as string | undefined) ?? WEBHOOK_NAMESPACE,
    failurePolicy: values.get('failure-policy') as 'Ignore' | 'Fail',
    ...(caBundlePem === undefined ? {} : { caBundlePem }),
    ...(canary === undefined ? {} : { canaryNamespace: canary }),
  });
  return ok(documents.map((value) => ({ value })));
}
