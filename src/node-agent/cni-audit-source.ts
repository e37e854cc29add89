/**
 * Where the CNI audit plugs in (`interlock cni-check`'s directory watch): a
 * source calls back with each verdict. An unhealthy verdict opens the node breaker (and taints the
 * node with --taint); the breaker closes only after the audit stayed healthy for a whole window.
 */
export interface CniAuditVerdict {
  readonly healthy: boolean;
  /** One sentence naming the file, plugin or chain at fault; posted on the Node when unhealthy. */
  readonly message: string;
}

export interface CniAuditSource {
  /** Starts delivering verdicts; returns the function that stops them. */
  subscribe(onVerdict: (verdict: CniAuditVerdict) => void): () => void;
}
