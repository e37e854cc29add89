import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCniCheckFlags } from '../../../../src/cli/commands/cni-check/config.js';
import { runCniCheck } from '../../../../src/cli/commands/cni-check/run.js';
import { auditAskingRuntime, cniWatchSource } from '../../../../src/cli/commands/node/cni-audit.js';
import type { CniAuditOptions } from '../../../../src/cni/run-cni-audit.js';
import { fail, ok } from '../../../../src/reason/result.js';
import { fixture } from '../../../cni/listing.js';

const STANDIN = fileURLToPath(new URL('../../../fixtures/cni/mesh-cni-standin.mjs', import.meta.url));
const SOCKET = 'unix:///run/containerd/containerd.sock';

describe('cni-check --cri-endpoint: its configuration', () => {
  it("the settings not given follow the runtime; the ones given stay the operator's", () => {
    const all = parseCniCheckFlags(['--mesh', 'linkerd', '--cri-endpoint', SOCKET], {});
    expect(all.ok && all.value.cri).toEqual({
      sockets: ['/run/containerd/containerd.sock'],
      asked: 'named',
      hostRoot: '/',
      follow: { confDir: true, binDirs: true, maxConfNum: true, runtime: true },
    });
    const named = parseCniCheckFlags(
      ['--mesh', 'linkerd', '--cri-endpoint', SOCKET, '--cni-bin-dir', '/home/kubernetes/bin', '--runtime', 'crio'],
      { INTERLOCK_CNI_MAX_CONF_NUM: '2' },
    );
    expect(named.ok && named.value.cri?.follow).toEqual({
      confDir: true,
      binDirs: false,
      maxConfNum: false,
      runtime: false,
    });
  });

  it("without the flag the runtimes' default sockets are asked, under --host-root; none asks nothing", () => {
    const auto = parseCniCheckFlags(['--mesh', 'linkerd'], {});
    expect(auto.ok && auto.value.cri).toMatchObject({
      sockets: ['/run/containerd/containerd.sock', '/var/run/crio/crio.sock'],
      asked: 'default',
    });
    const crio = parseCniCheckFlags(['--mesh', 'linkerd', '--runtime', 'crio', '--host-root', '/host'], {});
    expect(crio.ok && crio.value.cri).toMatchObject({ sockets: ['/host/var/run/crio/crio.sock'], hostRoot: '/host' });
    const none = parseCniCheckFlags(['--mesh', 'linkerd', '--cri-endpoint', 'none'], {});
    expect(none.ok && none.value.cri).toBeUndefined();
  });

  it('refuses a relative socket path and a relative --host-root', () => {
    const relative = parseCniCheckFlags(['--mesh', 'linkerd', '--cri-endpoint', 'run/containerd.sock'], {});
    expect(relative).toMatchObject({ ok: false, error: { message: expect.stringContaining('auto, none or unix') } });
    expect(parseCniCheckFlags(['--mesh', 'linkerd', '--host-root', 'host'], {}).ok).toBe(false);
  });
});

describe('cni-check --cri-endpoint: a runtime that does not answer', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'interlock-cri-endpoint-'));
    await mkdir(join(root, 'net.d'));
    await mkdir(join(root, 'bin'));
    for (const type of ['calico', 'portmap', 'bandwidth', 'linkerd-cni']) {
      await copyFile(STANDIN, join(root, 'bin', type));
      await chmod(join(root, 'bin', type), 0o755);
    }
    await writeFile(join(root, 'net.d', '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('a healthy directory is not called healthy when the comparison asked for cannot be made', async () => {
    const args = ['--mesh', 'linkerd', '--cni-conf-dir', join(root, 'net.d'), '--cni-bin-dir', join(root, 'bin')];
    expect((await runCniCheck(args, {})).exitCode).toBe(0);
    const asked = await runCniCheck([...args, '--cri-endpoint', `unix://${join(root, 'no.sock')}`, '-o', 'json'], {});
    expect(asked.exitCode).toBe(95);
    const verdict = JSON.parse(asked.stdout) as { findings: Array<{ code: string; message: string }> };
    expect(verdict.findings).toEqual([
      expect.objectContaining({
        code: 'RuntimeUnobserved',
        message: 'cannot compare the prediction with what containerd loaded: no socket there',
      }),
    ]);
  });
});

describe("the node agent's audit: a healthy verdict the runtime did not confirm says so", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'interlock-agent-unconfirmed-'));
    await mkdir(join(dir, 'net.d'));
    await mkdir(join(dir, 'bin'));
    for (const type of ['calico', 'portmap', 'bandwidth', 'linkerd-cni']) {
      await copyFile(STANDIN, join(dir, 'bin', type));
      await chmod(join(dir, 'bin', type), 0o755);
    }
    await writeFile(join(dir, 'net.d', '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('the default socket unanswered: healthy, and the message names the socket and why', async () => {
    const source = cniWatchSource({
      confDir: join(dir, 'net.d'),
      binDirs: [join(dir, 'bin')],
      runtime: 'containerd',
      meshPlugin: 'linkerd-cni',
      runtimeQuestion: {
        sockets: ['/run/containerd/containerd.sock'],
        asked: 'default',
        ask: () => Promise.resolve(fail('RuntimeUnreachable', 'connect ENOENT')),
      },
    });
    const verdict = await new Promise<{ healthy: boolean; message: string }>((resolve) => {
      const stop = source.subscribe((first) => {
        stop();
        resolve(first);
      });
    });
    expect(verdict).toEqual({
      healthy: true,
      message: expect.stringMatching(
        /is healthy, as predicted only: no container runtime answered the CRI Status on \/run\/containerd\/containerd\.sock \(connect ENOENT\)/,
      ) as unknown as string,
    });
  });
});

describe("the node agent's audit asks the runtime through its CRI client", () => {
  const options: CniAuditOptions = {
    confDir: '/etc/cni/net.d',
    binDirs: ['/opt/cni/bin'],
    runtime: 'containerd',
    meshPlugin: 'linkerd-cni',
  };
  const client = { statusInfo: () => Promise.resolve(ok(new Map([['cniconfig', '{}']]))) };

  it('with a client: asked on its one socket (named: an error if unanswered), the mounted directories kept', async () => {
    const asking = auditAskingRuntime({ ...options, runtime: 'crio' }, client, {
      path: '/var/run/crio/crio.sock',
      named: true,
    });
    expect(asking.followRuntime).toBeUndefined();
    expect(asking.runtimeQuestion).toMatchObject({ sockets: ['/var/run/crio/crio.sock'], asked: 'named' });
    expect(await asking.runtimeQuestion?.ask('/var/run/crio/crio.sock')).toEqual(ok(new Map([['cniconfig', '{}']])));
    const unnamed = auditAskingRuntime(options, client, { path: '/run/containerd/containerd.sock', named: false });
    expect(unnamed.runtimeQuestion?.asked).toBe('default');
    expect(auditAskingRuntime(options, undefined, undefined).runtimeQuestion).toBeUndefined();
  });
});
