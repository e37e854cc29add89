/**
 * A container's status as the kubelet publishes it in pod.status.(init)containerStatuses. Every
 * state variant is present, the unused ones null, so a merge patch replaces the state whole.
 */
export interface Terminated {
  readonly exitCode: number;
  readonly reason: string;
  readonly message: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly containerID: string;
}

export type State =
  | { readonly waiting: { readonly reason: string; readonly message?: string } }
  | { readonly running: { readonly startedAt: string } }
  | { readonly terminated: Terminated };

export interface ContainerStatus {
  readonly name: string;
  readonly image: string;
  readonly containerID?: string;
  readonly ready: boolean;
  readonly started?: boolean;
  readonly restartCount: number;
  readonly state: State;
  readonly lastState: State | Record<string, never>;
}

export const waiting = (reason: string, message?: string): State => ({
  waiting: { reason, ...(message === undefined ? {} : { message }) },
});

/** The JSON the kubelet would send for a state: the other variants explicitly null (merge patch). */
function stateJson(state: State | Record<string, never>): Record<string, unknown> {
  return { waiting: null, running: null, terminated: null, ...state };
}

export function statusJson(status: ContainerStatus): Record<string, unknown> {
  return { ...status, state: stateJson(status.state), lastState: stateJson(status.lastState) };
}

/** CRI timestamps are nanoseconds since the epoch; Kubernetes prints RFC 3339 seconds. */
export const rfc3339 = (nanoseconds: number): string =>
  new Date(Math.floor(nanoseconds / 1e6)).toISOString().replace(/\.\d{3}Z$/, 'Z');
