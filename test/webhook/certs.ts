import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Authority {
  readonly dir: string;
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

const openssl = (args: string[], cwd: string) => execFileSync('openssl', args, { cwd, stdio: 'pipe' });

/** A fresh CA and a serving certificate for 127.0.0.1 and localhost it signed (real X.509, by openssl). */
export function makeAuthority(name: string): Authority {
  const dir = mkdtempSync(join(tmpdir(), `interlock-webhook-${name}-`));
  const subj = (cn: string) => ['-subj', `/CN=${cn}`];
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '2',
      ...subj(`${name}-ca`),
    ],
    dir,
  );
  openssl(
    [
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      'tls.key',
      '-out',
      'tls.csr',
      ...subj('interlock-webhook'),
    ],
    dir,
  );
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
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
      '-days',
      '2',
      '-extfile',
      'ext.cnf',
    ],
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
