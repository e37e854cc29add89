import { readFileSync } from 'node:fs';

export interface Capabilities {
  readonly netAdmin: boolean;
  readonly netRaw: boolean;
  /** CAP_SETUID and CAP_SETGID: the probe may connect from a child running as another uid. */
  readonly setIds?: boolean;
}

const CAP_NET_ADMIN = 12n;
const CAP_NET_RAW = 13n;
const CAP_SETGID = 6n;
const CAP_SETUID = 7n;

/** Parses the CapEff line of /proc/self/status (a hex mask). Pure. */
export function capabilitiesFromStatus(status: string): Capabilities | undefined {
  const match = /^CapEff:\s*([0-9a-fA-F]+)\s*$/m.exec(status);
  if (!match) return undefined;
  const mask = BigInt(`0x${match[1]}`);
  const has = (bit: bigint): boolean => ((mask >> bit) & 1n) === 1n;
  return { netAdmin: has(CAP_NET_ADMIN), netRaw: has(CAP_NET_RAW), setIds: has(CAP_SETUID) && has(CAP_SETGID) };
}

/**
 * Read synchronously: procfs answers from memory, and an asynchronous read would start libuv's
 * thread pool (four threads) in an init container that otherwise never needs it.
 */
export function readCapabilities(): Capabilities | undefined {
  try {
    return capabilitiesFromStatus(readFileSync('/proc/self/status', 'utf8'));
  } catch {
    return undefined;
  }
}
