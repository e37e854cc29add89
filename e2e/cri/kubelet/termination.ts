import { open, readFile } from 'node:fs/promises';

/** The kubelet's bounds (pkg/kubelet/container): 4 KiB of the file; 80 lines and 2 KiB of the log. */
const MAX_MESSAGE_BYTES = 4096;
const MAX_LOG_LINES = 80;
const MAX_LOG_BYTES = 2048;

export type TerminationMessagePolicy = 'File' | 'FallbackToLogsOnError';

/**
 * The termination message as the kubelet reads it after a container exits: the last 4 KiB of the
 * file it mounted at terminationMessagePath; with FallbackToLogsOnError and a non-zero exit, an
 * empty (or missing) file gives way to the tail of the container's log.
 */
export async function terminationMessage(input: {
  readonly hostFile: string;
  readonly logPath: string;
  readonly policy: TerminationMessagePolicy;
  readonly exitCode: number;
}): Promise<string> {
  const fallback = input.policy === 'FallbackToLogsOnError' && input.exitCode !== 0;
  const file = await tailBytes(input.hostFile, MAX_MESSAGE_BYTES);
  if (file === undefined || file.length === 0) return fallback ? await logTail(input.logPath) : '';
  return file.toString('utf8');
}

async function tailBytes(path: string, max: number): Promise<Buffer | undefined> {
  const handle = await open(path, 'r').catch(() => undefined);
  if (!handle) return undefined;
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, max);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return buffer;
  } finally {
    await handle.close();
  }
}

/**
 * The last 80 lines, at most 2 KiB, of a CRI log (`<time> <stream> <P|F> <text>` per line; a P
 * line continues on the next), as the kubelet's readLastStringFromContainerLogs gives them.
 */
async function logTail(logPath: string): Promise<string> {
  const text = await readFile(logPath, 'utf8').catch(() => '');
  const lines: string[] = [];
  let partial = '';
  for (const line of text.split('\n')) {
    const match = /^\S+ (?:stdout|stderr) ([PF]) ?(.*)$/.exec(line);
    if (!match) continue;
    partial += match[2];
    if (match[1] === 'F') {
      lines.push(`${partial}\n`);
      partial = '';
    }
  }
  const joined = lines.slice(-MAX_LOG_LINES).join('');
  const bytes = Buffer.from(joined, 'utf8');
  return bytes.length <= MAX_LOG_BYTES ? joined : bytes.subarray(bytes.length - MAX_LOG_BYTES).toString('utf8');
}
