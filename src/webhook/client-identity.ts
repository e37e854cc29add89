import type { PeerCertificate } from 'node:tls';

/**
 * Whether the client certificate (already verified against --client-ca by the handshake) names
 * one of `names`: its subject CN, or a DNS name of its subjectAltName. Only names Node prints
 * plainly count (`DNS:name`): a quoted or escaped entry (a name holding a comma) never matches.
 */
export function clientNamed(certificate: Partial<PeerCertificate> | undefined, names: readonly string[]): boolean {
  if (!certificate) return false;
  const common = certificate.subject?.CN;
  const commons = Array.isArray(common) ? common : typeof common === 'string' ? [common] : [];
  const dns = (certificate.subjectaltname ?? '')
    .split(', ')
    .map((entry) => /^DNS:([^\s",\\]+)$/.exec(entry)?.[1])
    .filter((name): name is string => name !== undefined);
  // A certificate with several CNs is ambiguous: only a single one is read.
  const presented = [...(commons.length === 1 ? commons : []), ...dns];
  return presented.some((name) => names.includes(name));
}
