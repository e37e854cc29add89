import { helpOrVersion } from '../../../../src/cli/help-command.js';
import { execFileSync } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCniCheck } from '../../../../src/cli/commands/cni-check/run.js';
import { conflist, fixture } from '../../../cni/listing.js';

const STANDIN = fileURLToPath(new URL('../../../fixtures/cni/mesh-cni-standin.mjs', import.meta.url));
const OLD_STANDIN = fileURLToPath(new URL('../../../fixtures/cni/old-cni-standin.mjs', import.meta.url));

let root: string;
let confDir: string;
let binDir: string;
// The audit's rules alone: asking the runtime is tested in ask-runtime.test.ts, hermetically.
const run = (...args: string[]) =>
  runCniCheck(['--cni-conf-dir', confDir, '--cni-bin-dir', binDir, '--cri-endpoint', 'none', ...args], {});
const json = async (...args: string[]) => {
  const result = await run('--format', 'json', ...args);
  return {
    exitCode: result.exitCode,
    verdict: JSON.parse(result.stdout) as {
      healthy: boolean;
      loads?: { file: string };
      findings: Array<{ code: string; message: string }>;
    },
  };
};

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'cni-check-'));
  confDir = join(root, 'net.d');
  binDir = join(root, 'bin');
  await mkdir(confDir);
  await mkdir(binDir);
  for (const type of ['calico', 'portmap', 'bandwidth', 'linkerd-cni', 'istio-cni', 'flannel', 'mesh-x'])
    await copyFile(STANDIN, join(binDir, type));
  await copyFile(OLD_STANDIN, join(binDir, 'old-mesh'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe('interlock cni-check', () => {
  it('healthy: exit 0, with the file containerd loads and its chain', async () => {
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    const result = await run('--mesh', 'linkerd');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('HEALTHY: containerd loads 10-calico.conflist and chains linkerd-cni after calico');
  });

  it("unhealthy: the mesh's own failure code (linkerd 95, istio 126, generic 97)", async () => {
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico.conflist'));
    expect((await run('--mesh', 'linkerd')).exitCode).toBe(95);
    expect((await run('--mesh', 'istio')).exitCode).toBe(126);
    expect((await run('--mesh', 'generic', '--mesh-plugin', 'mesh-x')).exitCode).toBe(97);
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-flannel-istio.conflist'));
    expect((await run('--mesh', 'istio')).exitCode).toBe(0);
  });

  it('asks every plugin binary for its versions: a plugin supporting only 0.3.x fails a 1.0.0 list (S4)', async () => {
    await writeFile(join(confDir, '10-net.conflist'), conflist('net', ['calico', 'old-mesh', 'linkerd-cni'], '1.0.0'));
    const { exitCode, verdict } = await json('--mesh', 'linkerd');
    expect(exitCode).toBe(95);
    expect(verdict.findings).toEqual([
      expect.objectContaining({
        code: 'VersionUnsupported',
        message: expect.stringContaining('plugin "old-mesh" supports CNI versions 0.3.0, 0.3.1, not 1.0.0'),
      }),
    ]);
    await writeFile(join(confDir, '10-net.conflist'), conflist('net', ['calico', 'old-mesh', 'linkerd-cni'], '0.3.1'));
    expect((await json('--mesh', 'linkerd')).exitCode).toBe(0);
  });

  it('a plugin that never answers VERSION is bounded by --version-timeout and fails closed', async () => {
    // The others answer at once (a shell script), so only the hanging one meets the deadline.
    const quick = `#!/bin/sh\necho '{"cniVersion":"1.0.0","supportedVersions":["0.3.1","1.0.0"]}'\n`;
    for (const type of ['portmap', 'bandwidth', 'linkerd-cni']) await writeFile(join(binDir, type), quick);
    await writeFile(join(binDir, 'calico'), '#!/bin/sh\nexec sleep 30\n');
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    const { exitCode, verdict } = await json('--mesh', 'linkerd', '--version-timeout', '1s');
    expect(exitCode).toBe(95);
    expect(verdict.findings).toEqual([
      expect.objectContaining({ code: 'VersionUnknown', message: expect.stringContaining('no answer within 1000 ms') }),
    ]);
  });

  it('a binary without an execute bit, and a plugin with no binary', async () => {
    await chmod(join(binDir, 'bandwidth'), 0o644);
    await rm(join(binDir, 'portmap'));
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    const { verdict } = await json('--mesh', 'linkerd');
    expect(verdict.findings.map((finding) => finding.code).sort()).toEqual(['PluginMissing', 'PluginNotExecutable']);
  });

  it('searches the binary directories in order', async () => {
    const second = join(root, 'bin2');
    await mkdir(second);
    await rm(join(binDir, 'linkerd-cni'));
    await copyFile(STANDIN, join(second, 'linkerd-cni'));
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    expect(
      (await runCniCheck(['--mesh', 'linkerd', '--cni-conf-dir', confDir, '--cni-bin-dir', `${binDir},${second}`], {}))
        .exitCode,
    ).toBe(0);
    expect((await run('--mesh', 'linkerd')).exitCode).toBe(95);
  });

  it('a file mid-write is re-read, never taken as the answer: completed in time it is used', async () => {
    const good = fixture('10-calico-linkerd.conflist');
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico.conflist'));
    await writeFile(join(confDir, '05-new.conflist'), good.slice(0, 120));
    const completing = new Promise((resolve) => setTimeout(resolve, 200)).then(() =>
      writeFile(join(confDir, '05-new.conflist'), good),
    );
    const { exitCode, verdict } = await json('--mesh', 'linkerd');
    await completing;
    expect(verdict.loads?.file).toBe('05-new.conflist');
    expect(exitCode).toBe(0);
  });

  it('a file that stays partial is reported as partial, with what containerd does', async () => {
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    await writeFile(join(confDir, '05-new.conflist'), fixture('10-calico-linkerd.conflist').slice(0, 120));
    const { exitCode, verdict } = await json('--mesh', 'linkerd');
    expect(exitCode).toBe(95);
    expect(verdict.findings[0]).toMatchObject({
      code: 'PartialFile',
      message: expect.stringContaining('05-new.conflist ends in the middle of its JSON'),
    });
  });

  it('a symlink to a directory with a counted name is a file to libcni, and unreadable', async () => {
    await mkdir(join(root, 'elsewhere'));
    await symlink(join(root, 'elsewhere'), join(confDir, '00-link.conf'));
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    const { verdict } = await json('--mesh', 'linkerd');
    expect(verdict.findings[0]).toMatchObject({
      code: 'LoadFails',
      message: expect.stringContaining('cannot be read (it is a directory; name a file)'),
    });
  });

  it('a FIFO with a counted name is never opened (the audit stays bounded) and is reported as unreadable', async () => {
    execFileSync('mkfifo', [join(confDir, '00-pipe.conf')]);
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    const { exitCode, verdict } = await json('--mesh', 'linkerd');
    expect(exitCode).toBe(95);
    expect(verdict.findings[0]).toMatchObject({
      code: 'LoadFails',
      message: expect.stringContaining('not a regular file'),
    });
  });

  it('a file over 1 MiB is not read; more than 2000 configuration files is bad data (65)', async () => {
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    await writeFile(join(confDir, '99-huge.conflist'), Buffer.alloc(2 << 20, 32));
    const { exitCode, verdict } = await json('--mesh', 'linkerd');
    expect(exitCode).toBe(0);
    expect(verdict.findings).toEqual([]);
    await Promise.all(Array.from({ length: 2001 }, (_, i) => writeFile(join(confDir, `${i}.json`), '{}')));
    const many = await run('--mesh', 'linkerd');
    expect(many.exitCode).toBe(65);
    expect(many.stderr).toContain('audits at most 2000');
  });

  it("--max-conf-num: every file up to it must load, and the first is still the pods' network", async () => {
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    await writeFile(join(confDir, '20-broken.conflist'), '{"name":"x","plugins":[]}');
    expect((await run('--mesh', 'linkerd')).exitCode).toBe(0);
    const { exitCode, verdict } = await json('--mesh', 'linkerd', '--max-conf-num', '2');
    expect(exitCode).toBe(95);
    expect(verdict.findings[0]).toMatchObject({ code: 'LoadFails', file: '20-broken.conflist' });
  });

  it('--crio-default-network: CRI-O pinned to a network by name', async () => {
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    await writeFile(join(confDir, '20-other.conflist'), conflist('other', ['calico', 'portmap']));
    expect((await run('--mesh', 'linkerd', '--runtime', 'crio')).exitCode).toBe(0);
    const { exitCode, verdict } = await json(
      '--mesh',
      'linkerd',
      '--runtime',
      'crio',
      '--crio-default-network',
      'other',
    );
    expect(exitCode).toBe(95);
    expect(verdict.loads?.file).toBe('20-other.conflist');
  });

  it('--runtime crio: the CRI-O rules', async () => {
    await writeFile(join(confDir, '00-bad.conflist'), '{"name":"x","plugins":[]}');
    await writeFile(join(confDir, '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    expect((await run('--mesh', 'linkerd', '--runtime', 'crio')).exitCode).toBe(0);
    expect((await run('--mesh', 'linkerd')).exitCode).toBe(95);
  });

  it('64 on bad flags, 66 on an unreadable directory', async () => {
    expect((await run()).exitCode).toBe(64);
    expect((await run('--mesh', 'consul')).exitCode).toBe(64);
    expect((await run('--mesh', 'generic')).stderr).toContain('--mesh generic needs --mesh-plugin');
    expect((await run('--mesh', 'linkerd', '--runtime', 'docker')).exitCode).toBe(64);
    expect((await run('--mesh', 'linkerd', '--format', 'yaml')).exitCode).toBe(64);
    expect((await run('--mesh', 'linkerd', '--mesh-plugin', '../x')).exitCode).toBe(64);
    expect((await run('--mesh', 'linkerd', 'extra')).exitCode).toBe(64);
    expect((await run('--mesh', 'linkerd', '--bogus')).exitCode).toBe(64);
    expect((await run('--mesh', 'linkerd', '--version-timeout', 'forever')).exitCode).toBe(64);
    expect((await runCniCheck(['--mesh', 'linkerd', '--cni-conf-dir', join(root, 'missing')], {})).exitCode).toBe(66);
    expect((await runCniCheck(['--cni-conf-dir', confDir], { INTERLOCK_MESH: 'nope' })).stderr).toContain(
      'INTERLOCK_MESH="nope"',
    );
    // --help is answered from the command table before the command runs, as run-cli does.
    expect(helpOrVersion('cni-check', ['--cni-conf-dir', confDir, '--help'], 80)?.stdout).toContain(
      'Usage: interlock cni-check',
    );
  });
});
