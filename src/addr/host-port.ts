/** `host:port`, with an IPv6 host in brackets (`[fd00::1]:15001`) so the port cannot be read as part of it. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
