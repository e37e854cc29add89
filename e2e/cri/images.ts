import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../cni/containerd-node.js';

/** The image under test (scripts/test.sh builds it). */
export const INTERLOCK_IMAGE = process.env['INTERLOCK_IMAGE'] ?? 'mesh-interlock:dev';
/** The sandbox image, built here: a static pause binary and nothing else. */
export const PAUSE_IMAGE = 'mesh-interlock-pause:cri-e2e';
const PAUSE_SOURCE = fileURLToPath(new URL('./pause/pause.c', import.meta.url));

/** How containerd names an image that `docker save` wrote with a short name. */
export const criName = (image: string): string =>
  image.includes('/') ? image : `docker.io/library/${image.includes(':') ? image : `${image}:latest`}`;

async function must(command: string, args: readonly string[], input?: string): Promise<string> {
  const result = await run(command, args, { timeoutMs: 120_000, ...(input === undefined ? {} : { input }) });
  if (result.exitCode !== 0)
    throw new Error(`${command} ${args.join(' ')}: exit ${result.exitCode}: ${result.stderr.slice(-2000)}`);
  return result.stdout;
}

/**
 * Builds the pause image in Docker (idempotent: the same source gives the same image): compiled
 * statically so the image holds one file, and imported with `docker import`, which pulls nothing.
 */
export async function buildPauseImage(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'interlock-pause-'));
  try {
    await must('gcc', ['-static', '-Os', '-s', '-o', join(dir, 'pause'), PAUSE_SOURCE]);
    const archive = join(dir, 'rootfs.tar');
    await must('tar', ['-C', dir, '--owner=0', '--group=0', '--mtime=@0', '-cf', archive, 'pause']);
    await must('docker', ['import', '--change', 'ENTRYPOINT ["/pause"]', archive, PAUSE_IMAGE]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `docker save IMAGE | ctr images import -` into the CRI plugin's namespace, k8s.io. */
export async function importImage(socket: string, image: string): Promise<void> {
  const save = spawn('docker', ['save', image], { stdio: ['ignore', 'pipe', 'pipe'] });
  let saveError = '';
  save.stderr.on('data', (chunk: Buffer) => (saveError += chunk.toString('utf8')));
  const imported = await run('ctr', ['-a', socket, '-n', 'k8s.io', 'images', 'import', '-'], {
    input: save.stdout,
    timeoutMs: 180_000,
  });
  if (imported.exitCode !== 0) throw new Error(`importing ${image}: ${imported.stderr}${saveError}`);
}
