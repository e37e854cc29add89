import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { runInject } from '../../src/cli/commands/inject/run.js';
import { readStdinBounded } from '../../src/cli/input/read-manifest-input.js';

const MAIN = join(import.meta.dirname, '../../dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), `interlock-inject-${process.pid}-`));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `kubectl get deploy -A -o yaml` of a mid-size cluster: a List of `count` Deployments. */
function deploymentList(count: number): string {
  const items: string[] = [];
  for (let index = 0; index < count; index++)
    items.push(`- apiVersion: apps/v1
  kind: Deployment
  metadata:
    annotations:
      deployment.kubernetes.io/revision: "3"
    labels:
      app: app-${index}
    name: app-${index}
    namespace: ns-${index % 40}
    resourceVersion: "${1000 + index}"
    uid: 0b5c7a1e-0000-4000-8000-${String(index).padStart(12, '0')}
  spec:
    replicas: 2
    selector:
      matchLabels:
        app: app-${index}
    strategy:
      rollingUpdate:
        maxSurge: 25%
        maxUnavailable: 25%
      type: RollingUpdate
    template:
      metadata:
        creationTimestamp: null
        labels:
          app: app-${index}
      spec:
        containers:
        - image: registry.example/app-${index}:1.2.3
          imagePullPolicy: IfNotPresent
          name: app
          ports:
          - containerPort: 8080
            name: http
            protocol: TCP
          resources:
            limits:
              memory: 256Mi
            requests:
              cpu: 100m
              memory: 128Mi
          terminationMessagePath: /dev/termination-log
          terminationMessagePolicy: File
        dnsPolicy: ClusterFirst
        restartPolicy: Always
        schedulerName: default-scheduler
        securityContext: {}
        terminationGracePeriodSeconds: 30
  status:
    availableReplicas: 2
    observedGeneration: 3
    readyReplicas: 2
    replicas: 2
`);
  return `apiVersion: v1\nitems:\n${items.join('')}kind: List\nmetadata:\n  resourceVersion: ""\n`;
}

const run = (args: string[], input?: string) =>
  spawnSync('node', ['--max-old-space-size=192', MAIN, 'inject', ...args], {
    input,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    timeout: 240_000,
  });

describe('inject reads bounded input', () => {
  it('refuses a FIFO and a device for -f at once (exit 66), never waiting on them', () => {
    const fifo = join(dir, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    for (const path of [fifo, '/dev/zero', dir]) {
      const out = run(['--mesh', 'linkerd', '-f', path]);
      expect(out.status, path).toBe(66);
      expect(out.stderr).toMatch(/ManifestUnreadable: cannot read .*not a regular file/);
    }
  });

  it('stops reading an endless standard input at the cap (exit 65, ManifestTooLarge)', async () => {
    let sent = 0;
    const endless = new Readable({
      read() {
        sent += 1024 * 1024;
        this.push(Buffer.alloc(1024 * 1024, 0x20));
      },
    });
    const read = await readStdinBounded(endless, 4 * 1024 * 1024);
    expect(read.ok).toBe(false);
    expect(!read.ok && read.error.reason).toBe('ManifestTooLarge');
    expect(sent).toBeLessThanOrEqual(6 * 1024 * 1024);
    const piped = spawnSync(
      'bash',
      ['-c', `head -c 20000000 /dev/zero | node --max-old-space-size=192 "$1" inject --mesh linkerd -`, 'x', MAIN],
      {
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect(piped.status).toBe(65);
    expect(piped.stderr).toMatch(/ManifestTooLarge: standard input is larger than the 16 MiB input cap/);
  });

  it('a 3.5 MB List of 2,500 Deployments is injected under the image heap cap of 192 MiB, item by item', () => {
    const input = deploymentList(2500);
    expect(input.length).toBeGreaterThan(3_000_000);
    const path = join(dir, 'list.yaml');
    writeFileSync(path, input);
    const out = run(['--mesh', 'linkerd', '-f', path]);
    expect(out.status, out.stderr.slice(0, 400)).toBe(0);
    const list = parseAllDocuments(out.stdout)[0]!.toJS({ maxAliasCount: -1 }) as {
      items: Array<{ spec: { template: { spec: { initContainers: Array<{ name: string }> } } } }>;
    };
    expect(list.items).toHaveLength(2500);
    expect(
      list.items.every((item) => item.spec.template.spec.initContainers[0]?.name === 'linkerd-network-validator'),
    ).toBe(true);
    // Everything but the added containers is the input, byte for byte; a second run changes nothing.
    expect(out.stdout.replace(/ {8}(initContainers|volumes):\n( {8}[- ].*\n)+/g, '')).toBe(input);
    writeFileSync(path, out.stdout);
    expect(run(['--mesh', 'linkerd', '-f', path]).stdout).toBe(out.stdout);
    // What is asserted is the heap cap, not speed: two 3.5 MB runs take over a minute on a loaded runner.
  }, 480_000);

  it('one document over 1 MiB that may hold a pod template and is not a List is refused (exit 65), not parsed whole', async () => {
    const big = `kind: Deployment\nmetadata: {name: big}\nspec:\n  template:\n    spec:\n      containers: [{name: a, image: b}]\n    metadata:\n      annotations:\n${Array.from({ length: 200_000 }, (_, i) => `        k${i}: v\n`).join('')}`;
    const out = await runInject(['-', '--mesh', 'linkerd'], {}, () => Buffer.from(big));
    expect(out.exitCode).toBe(65);
    expect(out.stderr).toMatch(/ManifestTooLarge: <stdin>: a document of \d+ bytes is over the 1048576-byte cap/);
  });
});
