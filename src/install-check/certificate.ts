import { X509Certificate } from 'node:crypto';

/** cert-manager renews the webhook's certificate 15 days (renewBefore 360h) before it expires. */
export const EXPIRY_WARNING_DAYS = 15;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface CertificateFacts {
  readonly subject: string;
  readonly notAfter: Date;
  readonly daysLeft: number;
  readonly dnsNames: readonly string[];
  readonly certificate: X509Certificate;
}

/** The first certificate of a PEM bundle, or why there is none. */
export function firstCertificate(pem: string, now: Date): CertificateFacts | string {
  const block = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem)?.[0];
  if (!block) return 'no PEM certificate in it';
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(block);
  } catch {
    return 'its PEM certificate does not parse';
  }
  const notAfter = new Date(certificate.validTo);
  const dnsNames = (certificate.subjectAltName ?? '')
    .split(', ')
    .filter((name) => name.startsWith('DNS:'))
    .map((name) => name.slice(4));
  return {
    subject: certificate.subject.replace(/\n/g, ', '),
    notAfter,
    daysLeft: Math.floor((notAfter.getTime() - now.getTime()) / DAY_MS),
    dnsNames,
    certificate,
  };
}

/** Whether `issuer` signed `certificate` (name chaining and the signature both). */
export function signedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

export const expiryDate = (facts: CertificateFacts): string => facts.notAfter.toISOString().slice(0, 10);
