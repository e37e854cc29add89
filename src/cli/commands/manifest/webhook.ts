import { MESH_FLAG } from '../../../config/interception-flags.js';
import { flagValue, givenValue, type ParsedFlags } from '../../../config/parsed-flags.js';
import type { ManifestDocument } from '../../../inject/manifest.js';
import { capturingMesh } from '../../../mesh/meshes.js';
import { fail, ok, type Result } from '../../../reason/result.js';
import { OPEN_ADMISSION_PORT_WARNING, WEBHOOK_NAMESPACE, webhookManifest } from '../../../webhook/webhook-manifest.js';
import {
  API_SERVER_CIDR_FLAG,
  CA_BUNDLE_FLAG,
  CANARY_NAMESPACE_FLAG,
  EXEMPT_NAMESPACES_FLAG,
  FAILURE_POLICY_FLAG,
  METRICS_NAMESPACE_FLAG,
  WEBHOOK_CLIENT_CA_FLAG,
  WEBHOOK_CLIENT_NAME_FLAG,
} from './webhook-flags.js';
import { IMAGE_FLAG } from '../../flags/image-flag.js';
import { PLATFORM_FLAG } from '../../flags/platform-flag.js';
import { IMAGE_PULL_SECRET_FLAG, NAMESPACE_FLAG } from './flags.js';
import { namespaceOwnership } from './namespace-ownership.js';
import { readInputFile } from '../../input/read-input-file.js';
import { failClosedExemptions } from '../../../mesh/fail-closed-exemptions.js';

/**
 * Said above the first document: without --ca-bundle the serving certificate comes from
 * cert-manager, and on a cluster without it the Issuer and Certificate fail to apply.
 */
const CERT_MANAGER_COMMENT = [
  ' Needs cert-manager (cert-manager.io/v1 Issuer and Certificate): it issues the serving certificate',
  ' and injects its CA into the MutatingWebhookConfiguration. Without cert-manager, print this with',
  ' --ca-bundle FILE and create the Secret interlock-webhook-tls (tls.crt, tls.key) yourself.',
  " Then run 'interlock check' to see the webhook ready.",
].join('\n');

/** `interlock manifest --webhook`: the documents, with --ca-bundle and --webhook-client-ca read and checked to hold a PEM certificate. */
export function webhookDocuments(parsed: ParsedFlags): Result<ManifestDocument[], 'ConfigInvalid'> {
  const caBundlePem = readPem('--ca-bundle', flagValue(parsed, CA_BUNDLE_FLAG));
  if (!caBundlePem.ok) return caBundlePem;
  const clientCaPem = readPem('--webhook-client-ca', flagValue(parsed, WEBHOOK_CLIENT_CA_FLAG));
  if (!clientCaPem.ok) return clientCaPem;
  const clientNames = flagValue(parsed, WEBHOOK_CLIENT_NAME_FLAG);
  if (clientNames && clientCaPem.value === undefined)
    return fail(
      'ConfigInvalid',
      '--webhook-client-name needs --webhook-client-ca: names are checked on certificates of that CA',
    );
  const canary = flagValue(parsed, CANARY_NAMESPACE_FLAG);
  const apiServerCidrs = flagValue(parsed, API_SERVER_CIDR_FLAG);
  // manifest's --namespace has no declared default: each mode has its own (the webhook's is here).
  const namespace = flagValue(parsed, NAMESPACE_FLAG) ?? WEBHOOK_NAMESPACE;
  const mesh = givenValue(parsed, MESH_FLAG);
  const capturing = capturingMesh();
  // The webhook replaces every mesh's own validator whatever --mesh says; only a mesh that
  // captures pods by itself (ambient), which has no validator to replace, needs entries of its own.
  if (mesh !== undefined && mesh !== capturing?.mesh)
    return fail(
      'ConfigInvalid',
      `--mesh does not apply to manifest --webhook (given ${mesh}): it replaces every mesh's own validator; only --mesh ${capturing?.mesh ?? '(none)'}, which adds Interlock's validator to the pods that mesh captures`,
    );
  const pullSecrets = flagValue(parsed, IMAGE_PULL_SECRET_FLAG);
  const failurePolicy = flagValue(parsed, FAILURE_POLICY_FLAG);
  const exempt = flagValue(parsed, EXEMPT_NAMESPACES_FLAG) ?? (failurePolicy === 'Fail' ? failClosedExemptions() : []);
  const documents = webhookManifest({
    image: flagValue(parsed, IMAGE_FLAG),
    ...(pullSecrets === undefined ? {} : { imagePullSecrets: pullSecrets }),
    platform: flagValue(parsed, PLATFORM_FLAG),
    namespace,
    failurePolicy,
    ...(exempt.length > 0 ? { exemptNamespaces: exempt } : {}),
    metricsNamespace: flagValue(parsed, METRICS_NAMESPACE_FLAG),
    ...(mesh !== undefined && capturing ? { capturedPods: capturing.capturedPods } : {}),
    ...(caBundlePem.value === undefined ? {} : { caBundlePem: caBundlePem.value }),
    ...(clientCaPem.value === undefined ? {} : { clientCaPem: clientCaPem.value }),
    ...(clientNames === undefined ? {} : { clientNames }),
    ...(canary === undefined ? {} : { canaryNamespace: canary }),
    ...(apiServerCidrs === undefined ? {} : { apiServerCidrs }),
  });
  return ok(
    documents.map((value, index) => ({
      value,
      ...(value.kind === 'NetworkPolicy' && apiServerCidrs === undefined
        ? { comment: ` WARNING: ${OPEN_ADMISSION_PORT_WARNING}` }
        : {}),
      ...(index === 0
        ? {
            comment: [caBundlePem.value === undefined ? CERT_MANAGER_COMMENT : '', namespaceOwnership(namespace)]
              .filter(Boolean)
              .join('\n'),
          }
        : {}),
    })),
  );
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
