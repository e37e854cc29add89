import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A CA and a serving certificate it signed, as PEM, and the folder holding ca.crt, tls.crt, tls.key. */
export interface Authority {
  readonly dir: string;
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

export interface ServingName {
  /** The serving certificate's subject CN. */
  readonly commonName: string;
  /** Its subjectAltName entries, as openssl writes them: `IP:127.0.0.1`, `DNS:localhost`. */
  readonly altNames: readonly string[];
}

const LOCALHOST: ServingName = { commonName: 'interlock-webhook', altNames: ['IP:127.0.0.1', 'DNS:localhost'] };
const DAYS = '2';
/** A fresh P-256 key, unencrypted, written to `keyFile`. */
const newKey = (keyFile: string) => [
  '-newkey',
  'ec',
  '-pkeyopt',
  'ec_paramgen_curve:P-256',
  '-nodes',
  '-keyout',
  keyFile,
];

function openssl(args: readonly string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

/**
 * A fresh CA named `name` and a serving certificate it signed (real X.509, by openssl): for
 * 127.0.0.1 and localhost unless `serving` names others.
 */
export function makeAuthority(name: string, serving: ServingName = LOCALHOST, days = DAYS): Authority {
  const dir = mkdtempSync(join(tmpdir(), `interlock-certs-${name}-`));
  openssl(['req', '-x509', ...newKey('ca.key'), '-out', 'ca.crt', '-days', days, '-subj', `/CN=${name}-ca`], dir);
  openssl(['req', ...newKey('tls.key'), '-out', 'tls.csr', '-subj', `/CN=${serving.commonName}`], dir);
  writeFileSync(join(dir, 'ext.cnf'), `subjectAltName=${serving.altNames.join(',')}\n`);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'tls.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'tls.crt',
    ].concat(['-days', days, '-extfile', 'ext.cnf']),
    dir,
  );
  const read = (file: string) => readFileSync(join(dir, file));
  return { dir, ca: read('ca.crt'), cert: read('tls.crt'), key: read('tls.key') };
}

/** Writes the pair as a mounted Secret changes: both files written aside, then renamed into place. */
export function installPair(dir: string, authority: Authority): { cert: string; key: string } {
  const cert = join(dir, 'tls.crt');
  const key = join(dir, 'tls.key');
  writeFileSync(`${cert}.new`, authority.cert);
  writeFileSync(`${key}.new`, authority.key);
  renameSync(`${key}.new`, key);
  renameSync(`${cert}.new`, cert);
  return { cert, key };
}

export function removeAuthority(authority: Authority): void {
  rmSync(authority.dir, { recursive: true, force: true });
}

/** Another certificate signed by `authority`'s CA (a client of the same CA with another name). */
export function issueCertificate(authority: Authority, name: ServingName): { cert: Buffer; key: Buffer } {
  const base = `issued-${name.commonName.replace(/[^A-Za-z0-9-]/g, '_')}-${Math.random().toString(16).slice(2, 8)}`;
  openssl(['req', ...newKey(`${base}.key`), '-out', `${base}.csr`, '-subj', `/CN=${name.commonName}`], authority.dir);
  const ext = `${base}.cnf`;
  writeFileSync(join(authority.dir, ext), name.altNames.length ? `subjectAltName=${name.altNames.join(',')}\n` : '\n');
  openssl(
    [
      'x509',
      '-req',
      '-in',
      `${base}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${base}.crt`,
    ].concat(['-days', DAYS, '-extfile', ext]),
    authority.dir,
  );
  return {
    cert: readFileSync(join(authority.dir, `${base}.crt`)),
    key: readFileSync(join(authority.dir, `${base}.key`)),
  };
}
