import type { CniListing } from './cni-listing.js';
import type { MultusApiView } from './multus-api-view.js';
import type { PluginInventory } from './plugin-binary.js';
import type { RuntimeName } from './runtime-load.js';

/** Everything the audit is a pure function of. */
export interface CniAuditInput {
  readonly listing: CniListing;
  readonly runtime: RuntimeName;
  /** The mesh's chained plugin type: linkerd-cni, istio-cni, or --mesh-plugin. */
  readonly meshPlugin: string;
  readonly binDirs: readonly string[];
  readonly inventory: PluginInventory;
  /** How many times the directory was read before this answer (re-reads wait out partial files). */
  readonly reads?: number;
  readonly maxConfNum?: number;
  readonly crioDefaultNetwork?: string;
  /** Multus's attachment directory (/etc/cni/multus/net.d), when the node has one. */
  readonly multusListing?: CniListing;
  /** What the node agent read from the API for Multus: definitions and the meshed pods. */
  readonly multusApi?: MultusApiView;
}
