import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { queryPluginVersion } from '../../src/cni/query-plugin-version.js';
import type { CniVerdict } from '../../src/cni/audit-cni.js';
import { watchCniConfig } from '../../src/cni/watch-cni-config.js';
import type { Result } from '../../src/reason/result.js';
import { gone as goneWithin } from '../harness/process-gone.js';

// Issue 21, item 9: --version-timeout is a deadline. A plugin that answers and exits but leaves a
// child holding its stdout (a daemon it forgot to detach) must not keep the audit waiting for the
// child, and one stuck audit must never stop the ones after it.
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function workDir(): string {
  const dir = mkdtempSync(join(tmpdir(), `interlock-cni-deadline-${process.pid}-`));
  dirs.push(dir);
  return dir;
}

/** A real plugin script: prints a valid VERSION answer and exits 0, leaving `sleep` on its stdout. */
function stuckPlugin(dir: string, type: string): { path: string; childPidFile: string } {
  const path = join(dir, type);
  const childPidFile = join(dir, `${type}.child`);
  writeFileSync(
    path,
    [
      '#!/bin/sh',
      // The background child inherits stdout and never closes it.
      `sleep 100000 & echo $! > '${childPidFile}'`,
      `echo '{"cniVersion":"1.0.0","supportedVersions":["0.3.1","0.4.0","1.0.0"]}'`,
      'exit 0',
      '',
    ].join('\n'),
  );
  chmodSync(path, 0o755);
  return { path, childPidFile };
}

/** Each plugin process the test started is gone within 2 s. */
const gone = (pid: number): Promise<boolean> => goneWithin(pid, 2000);

describe('cni-check --version-timeout is a deadline', () => {
  it('a plugin whose child keeps stdout open: no answer at the deadline, and the child is killed with its group', async () => {
    const dir = workDir();
    const plugin = stuckPlugin(dir, 'stuck-cni');
    const answer = await queryPluginVersion(plugin.path, [dir], 300);
    expect(answer).toMatchObject({ ok: false, error: expect.stringMatching(/no answer within 300 ms/) });
    const child = Number(readFileSync(plugin.childPidFile, 'utf8'));
    expect(child).toBeGreaterThan(1);
    expect(await gone(child)).toBe(true);
  });

  it('a plugin that never exits and never answers: the whole group is killed at the deadline', async () => {
    const dir = workDir();
    const path = join(dir, 'silent-cni');
    const pidFile = join(dir, 'silent.child');
    writeFileSync(path, `#!/bin/sh\nsleep 100000 & echo $! > '${pidFile}'\nwait\n`);
    chmodSync(path, 0o755);
    const answer = await queryPluginVersion(path, [dir], 300);
    expect(answer).toMatchObject({ ok: false, error: expect.stringMatching(/no answer within 300 ms/) });
    expect(await gone(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
  });

  it('a well-behaved plugin still answers', async () => {
    const dir = workDir();
    const path = join(dir, 'good-cni');
    writeFileSync(path, `#!/bin/sh\necho '{"cniVersion":"1.0.0","supportedVersions":["1.0.0"]}'\n`);
    chmodSync(path, 0o755);
    expect(await queryPluginVersion(path, [dir], 5000)).toEqual({ ok: true, supportedVersions: ['1.0.0'] });
  });

  it('the directory watch: an audit stuck on such a plugin does not stop the next audit from reporting a broken config', async () => {
    const root = workDir();
    const confDir = join(root, 'net.d');
    const binDir = join(root, 'bin');
    mkdirSync(confDir);
    mkdirSync(binDir);
    const plugin = stuckPlugin(binDir, 'stuck-cni');
    stuckPlugin(binDir, 'linkerd-cni');
    const conflist = (plugins: object[]) => `${JSON.stringify({ cniVersion: '1.0.0', name: 'net', plugins })}\n`;
    writeFileSync(join(confDir, '10-net.conflist'), conflist([{ type: 'stuck-cni' }, { type: 'linkerd-cni' }]));
    const verdicts: Result<CniVerdict>[] = [];
    const watch = watchCniConfig(
      {
        confDir,
        binDirs: [binDir],
        runtime: 'containerd',
        meshPlugin: 'linkerd-cni',
        versionTimeoutMs: 300,
        intervalMs: 60_000,
        debounceMs: 20,
      },
      (verdict) => verdicts.push(verdict),
    );
    try {
      for (let i = 0; i < 1000 && verdicts.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(verdicts).toHaveLength(1);
      // The mesh plugin is dropped from the chain: the runtime would set pods up without it.
      writeFileSync(join(confDir, '10-net.conflist'), conflist([{ type: 'stuck-cni' }]));
      for (let i = 0; i < 1000 && verdicts.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(verdicts).toHaveLength(2);
      const second = verdicts[1]!;
      expect(second.ok && second.value.healthy).toBe(false);
      expect(existsSync(plugin.childPidFile)).toBe(true);
      expect(await gone(Number(readFileSync(plugin.childPidFile, 'utf8')))).toBe(true);
    } finally {
      watch.close();
    }
  });
});
