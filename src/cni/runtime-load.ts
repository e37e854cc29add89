import type { ConfList } from './conf-list.js';
import type { FileProblem } from './config-file.js';

export type RuntimeName = 'containerd' | 'crio';

export const RUNTIME_LABEL: Readonly<Record<RuntimeName, string>> = { containerd: 'containerd', crio: 'CRI-O' };

/** A network the runtime loaded; the first is the pod's default network (interface eth0). */
export interface LoadedNetwork {
  readonly file: string;
  readonly list: ConfList;
  /** A single-plugin file the runtime wrapped into a one-plugin list. */
  readonly wrapped: boolean;
  readonly ifName: string;
}

/** A file the runtime looked at and did not use (CRI-O skips what it cannot load or validate). */
export interface PassedOver {
  readonly file: string;
  readonly problem: FileProblem | 'plugins-unusable' | 'duplicate-name';
  readonly message: string;
}

export type LoadFailureKind = FileProblem | 'no-config' | 'no-valid-network' | 'default-missing';

/**
 * What a runtime does with a configuration directory: the networks it loads, or the error it
 * reports instead (then it sets up no pod network on this node).
 */
export type RuntimeLoad =
  | {
      readonly ok: true;
      readonly runtime: RuntimeName;
      /** Every counted file, in the runtime's order. */
      readonly candidates: readonly string[];
      readonly networks: readonly [LoadedNetwork, ...LoadedNetwork[]];
      readonly passedOver: readonly PassedOver[];
    }
  | {
      readonly ok: false;
      readonly runtime: RuntimeName;
      readonly candidates: readonly string[];
      readonly error: { readonly kind: LoadFailureKind; readonly file?: string; readonly message: string };
      readonly passedOver: readonly PassedOver[];
    };
