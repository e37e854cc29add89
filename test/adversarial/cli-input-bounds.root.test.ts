import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, openSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { usePods } from '../harness/pod-namespace.js';
import { runCommand, STACK_LINE } from './cli-run.js';

const pod = usePods(afterEach);

// Issue 7, item 11 (the command-line half): reading a dump is bounded in size, and a device or a
// FIFO is refused at once instead of read without end or waited on forever.
describe('explain reads its input files within bounds', () => {
  it('/dev/zero is refused as not a regular file (66), without reading it', async () => {
    const run = await runCommand(['explain', '--mesh', 'linkerd', '--iptables-save', '/dev/zero']);
    expect(run.hung).toBe(false);
    expect(run.exitCode).toBe(66);
    expect(run.stderr).toMatch(/--iptables-save .*\/dev\/zero.*not a regular file/);
  });

  it('a FIFO with no writer is refused (66), not waited on', async () => {
    const ns = pod();
    const path = `${ns.tmp}/dump.fifo`;
    execFileSync('mkfifo', [path]);
    const run = await runCommand(['explain', '--mesh', 'linkerd', '--nft-ruleset', path]);
    expect(run.hung).toBe(false);
    expect(run.exitCode).toBe(66);
    expect(run.stderr).toMatch(/not a regular file/);
  });

  it('a dump over the size cap is refused (65) with the cap in the message', async () => {
    const ns = pod();
    const path = `${ns.tmp}/huge.txt`;
    const fd = openSync(path, 'w');
    ftruncateSync(fd, 64 * 1024 * 1024);
    closeSync(fd);
    const run = await runCommand(['explain', '--mesh', 'linkerd', '--iptables-save', path]);
    expect(run.hung).toBe(false);
    expect(run.exitCode).toBe(65);
    expect(run.stderr).toMatch(/larger than the 16 MiB/);
    expect(run.stderr).not.toMatch(STACK_LINE);
  });
});

describe('the input cap holds for all dumps together', () => {
  it('two dumps of 9 MiB each are refused (65), one of them alone is read', async () => {
    const ns = pod();
    const files = ['a.txt', 'b.txt'].map((name) => `${ns.tmp}/${name}`);
    // Long lines, so the rules of one dump fit the analysis budget (src/rules/limits.ts) and only the input cap speaks.
    const rule = `-A OUTPUT -d 198.51.100.1/32 -p udp -m comment --comment "${'x'.repeat(96)}" -j RETURN\n`;
    for (const file of files)
      writeFileSync(
        file,
        `*nat\n:OUTPUT ACCEPT [0:0]\n${rule.repeat(Math.floor((9 * 1024 * 1024) / rule.length))}COMMIT\n`,
      );
    const both = await runCommand([
      'explain',
      '--mesh',
      'linkerd',
      '--iptables-save',
      files[0] ?? '',
      '--iptables-legacy-save',
      files[1] ?? '',
    ]);
    expect(both.exitCode).toBe(65);
    expect(both.stderr).toMatch(/--iptables-legacy-save .* larger than the 16 MiB input cap \(all dumps together\)/);
    const one = await runCommand(['explain', '--mesh', 'linkerd', '--iptables-save', files[0] ?? '']);
    expect(one.exitCode).toBe(95);
  });
});
