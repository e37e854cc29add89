/**
 * Reading a pod as plain data for the Pod Security Standards (pod-security-level.ts): a missing or
 * mistyped field is undefined, never a throw, as the printed manifests and API objects come.
 */
export type Json = Readonly<Record<string, unknown>>;

/** A pod or pod template's two halves, as the API server admits it. */
export interface JudgedPod {
  readonly metadata?: unknown;
  readonly spec: unknown;
}

/** One container of the pod, named as the checks' sentences name it. */
export interface PodContainer {
  readonly name: string;
  readonly securityContext: Json | undefined;
  readonly container: Json;
}

export const isJson = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function field(value: unknown, ...path: readonly string[]): unknown {
  let current = value;
  for (const key of path) current = isJson(current) ? current[key] : undefined;
  return current;
}

export const items = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isJson) : []);

export const words = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

const asJson = (value: unknown): Json | undefined => (isJson(value) ? value : undefined);

/** Init containers, then containers, then ephemeral containers: upstream's visitContainers order. */
export function podContainers(spec: unknown): PodContainer[] {
  return ['initContainers', 'containers', 'ephemeralContainers'].flatMap((list) =>
    items(field(spec, list)).map((container) => ({
      name: typeof container.name === 'string' ? container.name : '',
      securityContext: asJson(container.securityContext),
      container,
    })),
  );
}

/** The pod-level securityContext (spec.securityContext), when it is an object. */
export const podSecurityContext = (spec: unknown): Json | undefined => asJson(field(spec, 'securityContext'));

/** Whether the pod declares Windows (spec.os.name): upstream skips three restricted checks for it. */
export const isWindowsPod = (spec: unknown): boolean => field(spec, 'os', 'name') === 'windows';

/** A value as a sentence prints it: strings bare, anything else as JSON. */
export const shown = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** The first container whose value answers `bad`, as `container NAME: FIELD VALUE`. */
export function firstContainer(
  spec: unknown,
  fieldName: string,
  bad: (container: PodContainer) => string | undefined,
): string | undefined {
  for (const container of podContainers(spec)) {
    const value = bad(container);
    if (value !== undefined) return `container ${container.name}: ${fieldName} ${value}`;
  }
  return undefined;
}
