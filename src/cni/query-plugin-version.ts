import { fileErrorSentence } from '../file/file-error.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { isJsonObject } from './go-json.js';

/** A plugin's answer fits in far less; more is cut off, never buffered without bound. */
const MAX_OUTPUT_BYTES = 64 * 1024;

/** The version libcni 1.1.2 announces in a VERSION request (version.Current()). */
const REQUEST_VERSION = '1.0.0';

export type VersionAnswer =
  { readonly ok: true; readonly supportedVersions: readonly string[] } | { readonly ok: false; readonly error: string };

/**
 * Asks a plugin binary which CNI versions it supports: CNI_COMMAND=VERSION, the specification's
 * query without side effects (no container, no namespace, no interface are named). Bounded in
 * output, and in time by a real deadline: the plugin runs in its own process group, and at
 * `timeoutMs` the whole group is killed, the pipes destroyed and the answer given, even when the
 * plugin exited but a process it started still holds its stdout (which would otherwise keep the
 * pipe open, and the audit waiting, for as long as that process lives).
 */
export function queryPluginVersion(
  path: string,
  binDirs: readonly string[],
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<VersionAnswer> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve({ ok: false, error: INTERRUPTED });
      return;
    }
    const child = spawn(path, [], {
      env: { CNI_COMMAND: 'VERSION', CNI_PATH: binDirs.join(':'), PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let exited = false;
    let settled = false;
    const finish = (answer: VersionAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      killGroup(child);
      resolve(answer);
    };
    // The caller stopping (a signal to cni-check, the agent stopping) ends the plugin's group too:
    // it runs in a session of its own, so nothing else would (an orphan that ignores SIGTERM).
    const onAbort = (): void => finish({ ok: false, error: INTERRUPTED });
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () => finish({ ok: false, error: `no answer within ${timeoutMs} ms${exited ? HELD_OUTPUT : ''}` }),
      timeoutMs,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_OUTPUT_BYTES) chunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 512) stderr += chunk.toString('utf8');
    });
    child.on('error', (error: NodeJS.ErrnoException) =>
      finish({ ok: false, error: `cannot run it: ${fileErrorSentence(error)}` }),
    );
    child.on('exit', () => {
      exited = true;
    });
    child.on('close', (code) => finish(versionAnswerOf(Buffer.concat(chunks).toString('utf8'), code, stderr)));
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify({ cniVersion: REQUEST_VERSION }));
  });
}

const INTERRUPTED = 'not answered: the audit was stopped, and the plugin killed';

const HELD_OUTPUT = ' (the plugin exited, but a process it started still holds its output open)';

/** The plugin and everything it started (its process group), then our ends of the pipes. */
function killGroup(child: ChildProcess): void {
  if (child.pid !== undefined) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // ESRCH: the group is already gone.
    }
  }
  for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
}

/** The plugin's stdout as a VERSION answer (pure, so every shape of answer is unit-tested). */
export function versionAnswerOf(stdout: string, exitCode: number | null, stderr = ''): VersionAnswer {
  let body: unknown;
  try {
    body = JSON.parse(stdout);
  } catch {
    return {
      ok: false,
      error: `exit ${exitCode}, output is not JSON${stderr ? ` (stderr: ${stderr.trim().slice(0, 200)})` : ''}`,
    };
  }
  if (exitCode !== 0) {
    const message = isJsonObject(body) && typeof body.msg === 'string' ? body.msg : 'an error';
    return { ok: false, error: `exit ${exitCode}: ${message}` };
  }
  if (
    !isJsonObject(body) ||
    !Array.isArray(body.supportedVersions) ||
    !body.supportedVersions.every((item) => typeof item === 'string')
  ) {
    return { ok: false, error: 'the answer has no "supportedVersions" list' };
  }
  return { ok: true, supportedVersions: body.supportedVersions };
}
