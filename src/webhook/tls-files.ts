import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createSecureContext } from 'node:tls';
import { fileErrorSentence } from '../file/file-error.js';
import { fail, ok, type Result } from '../reason/result.js';

export interface TlsPaths {
  readonly cert: string;
  readonly key: string;
}

export interface TlsPair {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** Caps a mounted certificate chain or key: a Secret is at most 1 MiB. */
const MAX_TLS_FILE_BYTES = 1024 * 1024;

/** Both files, checked to form a usable pair (a key that does not match the certificate is refused). */
export async function loadTlsPair(paths: TlsPaths): Promise<Result<TlsPair, 'ConfigInvalid'>> {
  const read = async (path: string) => readFile(path).catch((error: NodeJS.ErrnoException) => error);
  const [cert, key] = await Promise.all([read(paths.cert), read(paths.key)]);
  for (const [path, value] of [
    [paths.cert, cert],
    [paths.key, key],
  ] as const) {
    if (value instanceof Error)
      return fail('ConfigInvalid', `TLS file ${path} cannot be read: ${fileErrorSentence(value)}`);
    if (value.length > MAX_TLS_FILE_BYTES) return fail('ConfigInvalid', `TLS file ${path} is over 1 MiB`);
  }
  const pair = { cert: cert as Buffer, key: key as Buffer };
  try {
    createSecureContext(pair);
  } catch (error) {
    return fail(
      'ConfigInvalid',
      `TLS files ${paths.cert} and ${paths.key} are not a usable pair: ${tlsPairSentence(error)}`,
    );
  }
  return ok(pair);
}

/**
 * OpenSSL's reason (`error:0480006C:PEM routines::no start line`) as a sentence: the codes mean
 * nothing to an operator, the cause and the fix do.
 */
function tlsPairSentence(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/no start line|bad base64|bad end line|PEM/i.test(message))
    return 'one of them is not PEM (a certificate chain and a private key, each between -----BEGIN and -----END lines)';
  if (/key values mismatch|KEY_VALUES_MISMATCH/i.test(message))
    return 'the private key does not belong to the certificate; mount the key the certificate was issued for';
  if (/unsupported|wrong tag|DECODER|ASN1/i.test(message))
    return 'the certificate or key cannot be decoded (not a certificate and key OpenSSL supports)';
  return 'the certificate and key do not form a pair this server can use; reissue them together';
}

export interface TlsWatch {
  close(): void;
}

/**
 * Calls `onPair` with each new valid pair. A mounted Secret changes by swapping a `..data`
 * symlink in the directory, so the directory is watched; a poll every `pollMs` catches what a
 * watch misses (some volume types send no events). A half-written or mismatched pair is reported
 * and the current one kept, until the next change completes it.
 */
export function watchTlsPair(
  paths: TlsPaths,
  current: TlsPair,
  pollMs: number,
  onPair: (pair: TlsPair) => void,
  onError: (message: string) => void,
): TlsWatch {
  let last = current;
  let running = false;
  let again = false;
  const check = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    const loaded = await loadTlsPair(paths);
    if (!loaded.ok) onError(loaded.error.message);
    else if (!loaded.value.cert.equals(last.cert) || !loaded.value.key.equals(last.key)) {
      last = loaded.value;
      onPair(loaded.value);
    }
    running = false;
    if (again) {
      again = false;
      void check();
    }
  };
  const watchers: FSWatcher[] = [...new Set([dirname(paths.cert), dirname(paths.key)])].flatMap((dir) => {
    try {
      return [watch(dir, { persistent: false }, () => void check())];
    } catch {
      return []; // the poll still runs
    }
  });
  const timer = setInterval(() => void check(), pollMs);
  timer.unref();
  return {
    close: () => {
      clearInterval(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}

/** The client CA bundle of --client-ca, checked to hold at least one certificate Node can use; none given, none. */
export async function loadClientCa(path: string | undefined): Promise<Result<Buffer | undefined, 'ConfigInvalid'>> {
  if (path === undefined) return ok(undefined);
  const pem = await readFile(path).catch((error: NodeJS.ErrnoException) => error);
  if (pem instanceof Error)
    return fail('ConfigInvalid', `--client-ca ${path} cannot be read (${pem.code ?? pem.message})`);
  if (pem.length > MAX_TLS_FILE_BYTES) return fail('ConfigInvalid', `--client-ca ${path} is over 1 MiB`);
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    return fail('ConfigInvalid', `--client-ca ${path}: no PEM certificate in it`);
  try {
    createSecureContext({ ca: pem });
  } catch (error) {
    return fail('ConfigInvalid', `--client-ca ${path}: not a usable CA bundle (${(error as Error).message})`);
  }
  return ok(pem);
}
