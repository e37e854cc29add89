import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { CORPUS } from './corpus.js';

const LINKERD = path.join(CORPUS, 'linkerd/cni-default/iptables-nft-save.v4.txt');

describe('explain exit codes', () => {
  it('a passing dump exits 0; --failure-exit-code is used only on failure', async () => {
    expect(
      (await runExplain(['--mesh', 'linkerd', '--iptables-save', LINKERD, '--failure-exit-code', '3'], {})).exitCode,
    ).toBe(0);
    const failing = await runExplain(
      ['--mesh', 'linkerd', '--outbound-port', '4141', '--iptables-save', LINKERD, '--failure-exit-code', '3'],
      {},
    );
    expect(failing.exitCode).toBe(3);
  });

  it('a failure exit code that already means bad flags, bad input or a crash is refused', async () => {
    for (const code of ['64', '65', '66', '70']) {
      const result = await runExplain(
        ['--mesh', 'linkerd', '--iptables-save', LINKERD, '--failure-exit-code', code],
        {},
      );
      expect(result.exitCode, code).toBe(64);
      expect(result.stderr).toMatch(new RegExp(`--failure-exit-code="${code}": expected 2-255`));
    }
  });

  it('bad input and missing files keep their own codes', async () => {
    expect((await runExplain(['--mesh', 'linkerd', '--iptables-save', '/nonexistent/dump'], {})).exitCode).toBe(66);
    expect((await runExplain(['--mesh', 'linkerd', '--nft-ruleset', LINKERD], {})).exitCode).toBe(65);
  });
});
