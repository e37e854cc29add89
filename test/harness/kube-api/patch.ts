/**
 * RFC 7386 merge patch and the strategic merge patch the API server applies to core types: lists
 * with a patch merge key (taints by `key`, containers by `name`, conditions by `type`) are merged
 * element by element, `$patch: delete` removes an element, other lists are replaced.
 */
type Json = unknown;

const MERGE_KEYS: Record<string, string> = {
  taints: 'key',
  containers: 'name',
  initContainers: 'name',
  conditions: 'type',
  tolerations: 'key',
  ownerReferences: 'uid',
  containerStatuses: 'name',
  initContainerStatuses: 'name',
};

const isObject = (value: Json): value is Record<string, Json> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const result: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

function mergeList(target: Json, patch: readonly Json[], mergeKey: string): Json[] {
  const result = Array.isArray(target) ? [...target] : [];
  for (const element of patch) {
    if (!isObject(element)) {
      result.push(element);
      continue;
    }
    const at = result.findIndex((existing) => isObject(existing) && existing[mergeKey] === element[mergeKey]);
    if (element.$patch === 'delete') {
      if (at >= 0) result.splice(at, 1);
      continue;
    }
    if (at >= 0) result[at] = strategicMergePatch(result[at], element);
    else result.push(strategicMergePatch({}, element));
  }
  return result;
}

export function strategicMergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const result: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch') continue;
    const mergeKey = MERGE_KEYS[key];
    if (value === null) delete result[key];
    else if (Array.isArray(value) && mergeKey) result[key] = mergeList(result[key], value, mergeKey);
    else result[key] = strategicMergePatch(result[key], value);
  }
  return result;
}
