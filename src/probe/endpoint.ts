import { hostPort } from '../addr/host-port.js';

/** One end of a TCP connection as the kernel names it (inet_ntop text and port). */
export interface Endpoint {
  readonly address: string;
  readonly port: number;
}

export function endpointKey(endpoint: Endpoint): string {
  return `${endpoint.address}|${endpoint.port}`;
}

export function describeEndpoint(endpoint: Endpoint): string {
  return hostPort(endpoint.address, endpoint.port);
}

export function sameEndpoint(a: Endpoint, b: Endpoint): boolean {
  return a.address === b.address && a.port === b.port;
}
