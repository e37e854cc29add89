/** The answer a region of packets must get. */
export type Expected =
  | { readonly kind: 'redirect'; readonly port: number }
  | { readonly kind: 'tproxy'; readonly port: number }
  /** Redirected to any one of these local ports: each is the proxy's (ambient TCP DNS: 15053, or 15001 before 1.23). */
  | { readonly kind: 'redirect-any'; readonly ports: readonly number[] }
  | { readonly kind: 'not-redirected' }
  /** Redirected to this port, or left to its original destination (Kuma's TCP DNS, by release). */
  | { readonly kind: 'redirect-or-not'; readonly port: number }
  | { readonly kind: 'dropped' }
  /** The proxy's own loopback traffic: left alone or sent to its inbound port, never to any other (a loop). */
  | { readonly kind: 'not-looped'; readonly inboundPort: number };

export function describeExpected(expected: Expected): string {
  switch (expected.kind) {
    case 'redirect':
      return `redirected to local port ${expected.port}`;
    case 'tproxy':
      return `diverted by TPROXY to port ${expected.port}`;
    case 'redirect-any':
      return `redirected to local port ${expected.ports.join(' or ')}`;
    case 'not-redirected':
      return 'not redirected';
    case 'redirect-or-not':
      return `redirected to local port ${expected.port}, or not redirected`;
    case 'dropped':
      return 'dropped';
    case 'not-looped':
      return `not redirected, or redirected to the inbound port ${expected.inboundPort}`;
  }
}
