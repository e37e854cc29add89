import { createHash } from 'node:crypto';
import { apiVersionOf, groupVersions, RESOURCE_TABLE, type ResourceInfo } from './resources.js';

/**
 * OpenAPI v3 discovery (/openapi/v3 and one document per group version), as the API server
 * publishes it: each operation names its group-version-kind and its query parameters. kubectl
 * reads it to learn that the server validates fields (`fieldValidation` on the write operations)
 * and then sends `fieldValidation=Strict` with every write instead of validating client-side,
 * exactly as against a real API server; the stand-in then rejects unknown fields (field-check.ts).
 */
const param = (name: string) => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } });
const WRITE_PARAMS = ['dryRun', 'fieldManager', 'fieldValidation', 'pretty'].map(param);
const PATCH_PARAMS = [...WRITE_PARAMS, param('force')];

function gvk(info: ResourceInfo) {
  return { group: info.group, version: info.version, kind: info.kind };
}

const ref = (info: ResourceInfo) => ({ $ref: `#/components/schemas/${schemaName(info)}` });
const schemaName = (info: ResourceInfo): string =>
  `io.k8s.stand-in.${(info.group || 'core').replace(/\./g, '-')}.${info.version}.${info.kind}`;

function operation(info: ResourceInfo, action: string, parameters: readonly object[]) {
  const body = { content: { 'application/json': { schema: ref(info) } } };
  return {
    operationId: `${action}${info.kind}`,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk(info),
    parameters,
    ...(['post', 'put', 'patch'].includes(action) ? { requestBody: body } : {}),
    responses: { '200': { description: 'OK', ...body } },
  };
}

function pathsOf(info: ResourceInfo): Record<string, object> {
  const base = `/${info.group ? `apis/${info.group}` : 'api'}/${info.version}`;
  const collection = `${base}${info.namespaced ? '/namespaces/{namespace}' : ''}/${info.name}`;
  return {
    [collection]: { get: operation(info, 'list', []), post: operation(info, 'post', WRITE_PARAMS) },
    [`${collection}/{name}`]: {
      get: operation(info, 'get', []),
      put: operation(info, 'put', WRITE_PARAMS),
      patch: operation(info, 'patch', PATCH_PARAMS),
      delete: operation(info, 'delete', [param('dryRun')]),
    },
  };
}

/** The OpenAPI v3 document of one group version (`api/v1`, `apis/apps/v1`), or undefined. */
export function openApiDocument(groupVersion: string): object | undefined {
  const infos = RESOURCE_TABLE.filter(
    (info) => (info.group ? `apis/${info.group}/${info.version}` : `api/${info.version}`) === groupVersion,
  );
  if (infos.length === 0) return undefined;
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes API stand-in', version: apiVersionOf(infos[0]!) },
    paths: Object.assign({}, ...infos.map(pathsOf)) as Record<string, object>,
    components: {
      schemas: Object.fromEntries(
        infos.map((info) => [schemaName(info), { type: 'object', 'x-kubernetes-group-version-kind': [gvk(info)] }]),
      ),
    },
  };
}

/** /openapi/v3: each group version's document, addressed with a hash of its content. */
export function openApiRoot(): object {
  const paths = Object.fromEntries(
    groupVersions().map(({ group, version }) => {
      const key = group ? `apis/${group}/${version}` : `api/${version}`;
      const hash = createHash('sha256')
        .update(JSON.stringify(openApiDocument(key)))
        .digest('hex')
        .slice(0, 32)
        .toUpperCase();
      return [key, { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` }];
    }),
  );
  return { paths };
}
