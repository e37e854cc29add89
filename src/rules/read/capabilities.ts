import { readFile } from 'node:fs/promises';

export interface Capabilities {
  readonly netAdmin: boolean;
  readonly netRaw: boolean;
}

const CAP_NET_ADMIN = 12n;
const CAP_NET_RAW = 13n;

/** Parses the CapEff line of /proc/self/status (a hex mask). Pure. */
export function capabilitiesFromStatus(status: string): Capabilities | undefined {
  const match = /^CapEff:\s*([0-9a-fA-F]+)\s*$/m.exec(status);
  if (!match) return undefined;
  const mask = BigInt(`0x${match[1]}`);
  return { netAdmin: ((mask >> CAP_NET_ADMIN) & 1n) === 1n, netRaw: ((mask >> CAP_NET_RAW) & 1n) === 1n };
}

export async function readCapabilities(): Promise<Capabilities | undefined> {
  try {
    return capabilitiesFromStatus(await readFile('/proc/self/status', 'utf8'));
  } catch {
    return undefined;
  }
}
