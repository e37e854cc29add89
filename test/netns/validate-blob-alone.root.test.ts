import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, corpusFile, launchArgs, usePods, verdictLine } from '../harness/pod-namespace.js';

const pod = usePods(afterEach);

// The init container's whole path is in the blob: a passing validate must never load
// interlock.commands.cjs (every other command, and the node:http its kube client pulls in).
// Installed without that file it still passes; a run that reached for it would fail naming it.
// Seen failing when run-cli imported the switch refusal on every validate.
describe('validate from a blob installed without interlock.commands.cjs', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function blobAlone(): string[] {
    const [node, ...flags] = launchArgs('snapshot');
    const blob = flags.pop() ?? '';
    flags.pop(); // --snapshot-blob
    const dir = mkdtempSync(join(tmpdir(), 'interlock-blob-alone-'));
    dirs.push(dir);
    chmodSync(dir, 0o755);
    copyFileSync(blob, join(dir, 'interlock.blob'));
    copyFileSync(join(blob, '..', 'netlink.node'), join(dir, 'netlink.node'));
    return [node ?? process.execPath, ...flags, '--snapshot-blob', join(dir, 'interlock.blob')];
  }

  function runIn(ns: ReturnType<typeof pod>, args: readonly string[]) {
    const command = blobAlone();
    const child = spawn(
      'ip',
      [
        ...['netns', 'exec', ns.pod, 'setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'],
        ...['--inh-caps=-all', '--bounding-set=-all', '--no-new-privs'],
        ...command,
        ...['validate', '--termination-log', ns.terminationLog, ...args],
      ],
      { cwd: '/', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    return collect(child, ns.terminationLog);
  }

  it('a pass on Linkerd’s rules', async () => {
    const ns = pod();
    ns.applyRules(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), 'nft');
    const run = await runIn(ns, ['--mesh', 'linkerd', '--timeout', '5s']);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(verdictLine(run.terminationMessage)).toMatch(/^Intercepted: /);
    expect(run.stderr).not.toMatch(/interlock\.commands\.cjs/);
  });
});
