import type { StartedTestContainer } from 'testcontainers';
import { baseImageOf, containerPid, INTERLOCK_IMAGE, NEVER_PULL, PodContainer, StartedOnly } from './containers.js';
import { host, hostQuiet, sleep } from './host.js';
import type { MeshRules } from './rules.js';

let podCounter = 0;

/**
 * A pod as the kubelet builds it: a sandbox container with network mode `none` holds the pod's
 * network namespace, and the "CNI plugins" are played from the host into that namespace.
 *
 * Traffic safety: the only way out of the pod is a veth into a sink namespace made here, which
 * forwards nothing anywhere real. Its only default route is `unreachable`, so a probe that the
 * mesh rules fail to capture gets an ICMP error back at once instead of leaving the machine.
 */
export class Pod {
  /** Containers that joined this pod's network namespace, stopped with the pod. */
  private readonly members: StartedTestContainer[] = [];
  private sinkCreated = false;

  private constructor(
    readonly sandbox: StartedTestContainer,
    /** Named handle (/run/netns/<name>) for the sandbox's network namespace. */
    readonly netns: string,
    readonly sinkNetns: string,
    private readonly subnet: number,
  ) {}

  static async create(): Promise<Pod> {
    podCounter += 1;
    const tag = `${process.pid % 100000}-${podCounter}`;
    // The pause container of a real pod: it does nothing but hold the namespaces.
    const sandbox = await new PodContainer(await baseImageOf(INTERLOCK_IMAGE))
      .withPullPolicy(NEVER_PULL)
      .withNetworkMode('none')
      .withEntrypoint(['sleep'])
      .withCommand(['infinity'])
      .withLabels({ 'io.mesh-interlock.e2e': 'sandbox' })
      .withWaitStrategy(new StartedOnly())
      .start();
    const pod = new Pod(sandbox, `ile2e-${tag}-pod`, `ile2e-${tag}-sink`, 1 + (podCounter % 250));
    try {
      await host('ip', ['netns', 'attach', pod.netns, String(await containerPid(sandbox.getId()))]);
    } catch (error) {
      await sandbox.stop();
      throw error;
    }
    return pod;
  }

  get sandboxId(): string {
    return this.sandbox.getId();
  }

  /** The pod's address, once the primary CNI has run. */
  get address(): string {
    return `10.88.${this.subnet}.2`;
  }

  private get gateway(): string {
    return `10.88.${this.subnet}.1`;
  }

  /**
   * Plays the primary CNI (a ptp/bridge-like plugin): a veth pair between the pod and the sink,
   * the pod's address, and a default route through the sink.
   */
  async runPrimaryCni(): Promise<void> {
    const tag = this.netns.slice('ile2e-'.length, -'-pod'.length).replace('-', 'x');
    const podEnd = `ilp${tag}`.slice(0, 15);
    const sinkEnd = `ils${tag}`.slice(0, 15);
    await host('ip', ['netns', 'add', this.sinkNetns]);
    this.sinkCreated = true;
    await host('ip', ['link', 'add', podEnd, 'type', 'veth', 'peer', 'name', sinkEnd]);
    await host('ip', ['link', 'set', sinkEnd, 'netns', this.sinkNetns]);
    await host('ip', ['link', 'set', podEnd, 'netns', this.netns]);

    await host('ip', ['-n', this.sinkNetns, 'link', 'set', sinkEnd, 'name', 'eth0']);
    await host('ip', ['-n', this.sinkNetns, 'addr', 'add', `${this.gateway}/24`, 'dev', 'eth0']);
    await host('ip', ['-n', this.sinkNetns, 'link', 'set', 'eth0', 'up']);
    await host('ip', ['-n', this.sinkNetns, 'link', 'set', 'lo', 'up']);
    // Forwarding on, but the only route onwards is `unreachable`: the sink answers every
    // uncaptured probe with ICMP "network unreachable" and forwards nothing.
    await host('ip', ['netns', 'exec', this.sinkNetns, 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1']);
    await host('ip', ['-n', this.sinkNetns, 'route', 'add', 'unreachable', 'default']);

    await host('ip', ['-n', this.netns, 'link', 'set', podEnd, 'name', 'eth0']);
    await host('ip', ['-n', this.netns, 'addr', 'add', `${this.address}/24`, 'dev', 'eth0']);
    await host('ip', ['-n', this.netns, 'link', 'set', 'eth0', 'up']);
    await host('ip', ['-n', this.netns, 'route', 'add', 'default', 'via', this.gateway, 'dev', 'eth0']);
  }

  /** Plays the mesh CNI: restores the mesh's NAT rules into the pod's namespace. */
  async runMeshCni(rules: MeshRules): Promise<void> {
    const tool = `${rules.family === 'ipv6' ? 'ip6tables' : 'iptables'}-${rules.backend}-restore`;
    await host('nsenter', [`--net=/run/netns/${this.netns}`, tool], rules.text);
  }

  /** The pod's nat table as the kernel holds it (for failure messages and sanity checks). */
  async natRules(backend: 'nft' | 'legacy' = 'nft'): Promise<string> {
    return (await host('nsenter', [`--net=/run/netns/${this.netns}`, `iptables-${backend}-save`, '-t', 'nat'])).stdout;
  }

  /** Whether something in the pod listens on this TCP port. */
  async listensOn(port: number): Promise<boolean> {
    const { stdout } = await host('nsenter', [`--net=/run/netns/${this.netns}`, 'ss', '-H', '-l', '-t', '-n']);
    return stdout.split('\n').some((line) => line.split(/\s+/)[3]?.endsWith(`:${port}`) ?? false);
  }

  /** Polls (bounded in count) until something listens on the port; false if it never does. */
  async waitForListener(port: number, attempts = 200, intervalMs = 50): Promise<boolean> {
    for (let i = 0; i < attempts; i += 1) {
      if (await this.listensOn(port)) return true;
      await sleep(intervalMs);
    }
    return false;
  }

  adopt(container: StartedTestContainer): void {
    this.members.push(container);
  }

  async destroy(): Promise<void> {
    for (const member of this.members.splice(0)) {
      await member.stop({ remove: true }).catch(() => undefined);
    }
    // Deleting the sink namespace deletes its veth end, and with it the pod's end.
    if (this.sinkCreated) await hostQuiet('ip', ['netns', 'delete', this.sinkNetns]);
    await hostQuiet('ip', ['netns', 'delete', this.netns]);
    await this.sandbox.stop({ remove: true }).catch(() => undefined);
  }
}
