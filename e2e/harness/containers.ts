import type Dockerode from 'dockerode';
import { GenericContainer, getContainerRuntimeClient, type ImagePullPolicy, type WaitStrategy } from 'testcontainers';

/** The image under test; scripts/image.sh builds it. */
export const INTERLOCK_IMAGE = process.env['INTERLOCK_IMAGE'] ?? 'mesh-interlock:dev';

/** Nothing can be pulled here: every image must already be local. */
export const NEVER_PULL: ImagePullPolicy = { shouldPull: () => false };

/**
 * Returns as soon as the container has started. One-shot containers exit by themselves (often
 * non-zero, on purpose), which every built-in strategy would report as a failed start.
 */
export class StartedOnly implements WaitStrategy {
  private startupTimeoutMs = 60_000;
  private startupTimeoutSet = false;

  async waitUntilReady(): Promise<void> {}

  withStartupTimeout(startupTimeoutMs: number): this {
    this.startupTimeoutMs = startupTimeoutMs;
    this.startupTimeoutSet = true;
    return this;
  }

  isStartupTimeoutSet(): boolean {
    return this.startupTimeoutSet;
  }

  getStartupTimeout(): number {
    return this.startupTimeoutMs;
  }
}

/** GenericContainer plus the pod security settings testcontainers has no builder method for. */
export class PodContainer extends GenericContainer {
  withReadOnlyRootFilesystem(): this {
    this.hostConfig.ReadonlyRootfs = true;
    return this;
  }

  /** The kubelet's cpu.shares for the pod: 2 for a BestEffort pod, 1024 per requested CPU. */
  withCpuShares(shares: number): this {
    this.hostConfig.CpuShares = shares;
    return this;
  }
}

export async function dockerContainer(id: string): Promise<Dockerode.Container> {
  const client = await getContainerRuntimeClient();
  return client.container.getById(id);
}

export async function containerPid(id: string): Promise<number> {
  const info = await (await dockerContainer(id)).inspect();
  const pid = info.State.Pid;
  if (!info.State.Running || !pid) throw new Error(`container ${id} is not running (status ${info.State.Status})`);
  return pid;
}

/** The image the Interlock image was built on, from its OCI label; the pod sandbox uses it too. */
export async function baseImageOf(image: string): Promise<string> {
  const client = await getContainerRuntimeClient();
  const info = await client.container.dockerode.getImage(image).inspect();
  const base = info.Config.Labels?.['org.opencontainers.image.base.name'];
  return base && base.length > 0 ? base : image;
}

export interface ContainerOutput {
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Reads everything an exited container wrote, stdout and stderr apart. Docker multiplexes both
 * streams in frames: 1 byte stream id, 3 bytes padding, 4 bytes big-endian length, payload.
 */
export async function containerOutput(container: Dockerode.Container): Promise<ContainerOutput> {
  const raw: unknown = await container.logs({ stdout: true, stderr: true, follow: false });
  const buffer = Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw));
  const parts: Record<1 | 2, Buffer[]> = { 1: [], 2: [] };
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    const stream = buffer[offset];
    const length = buffer.readUInt32BE(offset + 4);
    const payload = buffer.subarray(offset + 8, offset + 8 + length);
    if (stream === 1 || stream === 2) parts[stream].push(payload);
    offset += 8 + length;
  }
  return { stdout: Buffer.concat(parts[1]).toString('utf8'), stderr: Buffer.concat(parts[2]).toString('utf8') };
}
