import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { CniVerdict } from '../../src/cni/audit-cni.js';
import { watchCniConfig } from '../../src/cni/watch-cni-config.js';
import type { Result } from '../../src/reason/result.js';
import { fixture } from './listing.js';

const STANDIN = fileURLToPath(new URL('../fixtures/cni/mesh-cni-standin.mjs', import.meta.url));
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function node(): Promise<{ confDir: string; binDir: string }> {
  const root = await mkdtemp(join(tmpdir(), 'cni-watch-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const confDir = join(root, 'net.d');
  const binDir = join(root, 'bin');
  await mkdir(confDir);
  await mkdir(binDir);
  for (const type of ['calico', 'portmap', 'bandwidth', 'linkerd-cni']) await copyFile(STANDIN, join(binDir, type));
  return { confDir, binDir };
}

/** Collects verdicts and lets a test wait for the next one that satisfies a condition. */
function recorder() {
  const seen: Array<Result<CniVerdict>> = [];
  const waiters: Array<{
    test: (verdict: Result<CniVerdict>) => boolean;
    resolve: (verdict: Result<CniVerdict>) => void;
  }> = [];
  return {
    seen,
    listener: (verdict: Result<CniVerdict>) => {
      seen.push(verdict);
      for (const waiter of waiters.filter((item) => item.test(verdict))) waiter.resolve(verdict);
    },
    next: (test: (verdict: Result<CniVerdict>) => boolean) =>
      new Promise<Result<CniVerdict>>((resolve, reject) => {
        const found = seen.find(test);
        if (found) return resolve(found);
        waiters.push({ test, resolve });
        setTimeout(
          () =>
            reject(
              new Error(`no such verdict; saw ${JSON.stringify(seen.map((item) => item.ok && item.value.healthy))}`),
            ),
          15_000,
        );
      }),
  };
}

const healthy = (verdict: Result<CniVerdict>) => verdict.ok && verdict.value.healthy;
const unhealthy = (verdict: Result<CniVerdict>) => verdict.ok && !verdict.value.healthy;

describe("watchCniConfig: the node agent's CNI watch", () => {
  it('S6 (without the agent): healthy, then the primary rewrites its conflist without the mesh entry, and the watch turns unhealthy from the file event', async () => {
    const { confDir, binDir } = await node();
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    const record = recorder();
    // A periodic re-check far beyond the test's wait: only the file-system event can explain the change.
    const watch = watchCniConfig(
      { confDir, binDirs: [binDir], runtime: 'containerd', meshPlugin: 'linkerd-cni', intervalMs: 3_600_000 },
      record.listener,
    );
    cleanups.push(() => watch.close());
    await record.next(healthy);
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico.conflist'));
    const verdict = await record.next(unhealthy);
    expect(verdict.ok && verdict.value.findings.map((finding) => finding.code)).toEqual(['MeshMissing']);
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    await record.next((item) => healthy(item) && record.seen.indexOf(item) > 1);
    expect(record.seen.map((item) => item.ok && item.value.healthy)).toEqual([true, false, true]);
  });

  it('the periodic re-check catches what no event in the directory reports (a binary removed)', async () => {
    const { confDir, binDir } = await node();
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    const record = recorder();
    const watch = watchCniConfig(
      { confDir, binDirs: [binDir], runtime: 'containerd', meshPlugin: 'linkerd-cni', intervalMs: 200 },
      record.listener,
    );
    cleanups.push(() => watch.close());
    await record.next(healthy);
    await rm(join(binDir, 'linkerd-cni'));
    const verdict = await record.next(unhealthy);
    expect(verdict.ok && verdict.value.findings.map((finding) => finding.code)).toEqual(['PluginMissing']);
  });

  it('a directory that does not exist yet: unreadable first, healthy once the CNI installs it', async () => {
    const { confDir, binDir } = await node();
    const later = `${confDir}-later`;
    const record = recorder();
    const watch = watchCniConfig(
      { confDir: later, binDirs: [binDir], runtime: 'containerd', meshPlugin: 'linkerd-cni', intervalMs: 200 },
      record.listener,
    );
    cleanups.push(() => watch.close());
    const first = await record.next(() => true);
    expect(first.ok ? 'verdict' : first.error.reason).toBe('CniConfigUnreadable');
    await mkdir(later);
    await writeFile(join(later, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    await record.next(healthy);
    await writeFile(join(later, '10-calico.conflist'), fixture('10-calico.conflist'));
    await record.next(unhealthy);
  });

  it('reports an unchanged verdict once, and nothing after close()', async () => {
    const { confDir, binDir } = await node();
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    const record = recorder();
    const watch = watchCniConfig(
      { confDir, binDirs: [binDir], runtime: 'containerd', meshPlugin: 'linkerd-cni', intervalMs: 100 },
      record.listener,
    );
    await record.next(healthy);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(record.seen).toHaveLength(1);
    watch.close();
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico.conflist'));
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(record.seen).toHaveLength(1);
  });
});
