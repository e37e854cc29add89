/** One end of a TCP connection as the kernel names it (inet_ntop text and port). */
export interface Endpoint {
  readonly address: string;
  readonly port: number;
}

export function endpointKey(endpoint: Endpoint): string {
  return `${endpoint.address}|${endpoint.port}`;
}

export function describeEndpoint(endpoint: Endpoint): string {
  return endpoint.address.includes(':') ? `[${endpoint.address}]:${endpoint.port}` : `${endpoint.address}:${endpoint.port}`;
}

export function sameEndpoint(a: Endpoint, b: Endpoint): boolean {
  return a.address === b.address && a.port === b.port;
}
