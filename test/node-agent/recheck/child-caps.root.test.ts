import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { RECHECK_CAPABILITIES } from '../../../src/node-agent/manifest.js';
import { makeNamespace, removeNamespace } from '../../ambient/dumps.js';

// The children that read a pod's rules parse what the pod's tenant wrote (with its own NET_ADMIN):
// once inside the namespace they must not keep CAP_SYS_ADMIN. Stand-in savers on PATH record the
// capability sets of the very process the agent's child runs as the tool, then print an empty ruleset.
const SYS_ADMIN = 21n;
const NET_ADMIN = 12n;
const NET_RAW = 13n;

const dir = mkdtempSync(join(tmpdir(), 'interlock-childcaps-'));
const namespace = makeNamespace('childcaps');
afterAll(() => {
  removeNamespace(namespace);
  rmSync(dir, { recursive: true, force: true });
});

function recorder(name: string, output: string): string {
  const record = join(dir, `${name}.status`);
  writeFileSync(
    join(dir, name),
    `#!/bin/sh\ncat /proc/$$/status > ${record}\ncat /proc/$$/limits > ${record}.limits\nprintf '%s\\n' '${output}'\n`,
  );
  chmodSync(join(dir, name), 0o755);
  return record;
}

function capsOf(record: string): { eff: bigint; bnd: bigint; prm: bigint } {
  const text = readFileSync(record, 'utf8');
  const mask = (key: string) => BigInt(`0x${new RegExp(`^${key}:\\s*([0-9a-f]+)$`, 'm').exec(text)![1]!}`);
  return { eff: mask('CapEff'), bnd: mask('CapBnd'), prm: mask('CapPrm') };
}

const has = (mask: bigint, bit: bigint) => ((mask >> bit) & 1n) === 1n;

describe('the re-check’s reading children drop CAP_SYS_ADMIN after setns', () => {
  it('nft and iptables-nft-save run with NET_ADMIN and NET_RAW but without SYS_ADMIN', async () => {
    const nft = recorder('nft', '{"nftables": [{"metainfo": {"json_schema_version": 1}}]}');
    const save = recorder('iptables-nft-save', '# empty');
    process.env.PATH = `${dir}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}`;
    const { readPodRules } = await import('../../../src/node-agent/recheck/netns-rules.js');
    await readPodRules(`/run/netns/${namespace}`, ['ipv4'], 5_000);
    for (const record of [nft, save]) {
      const caps = capsOf(record);
      expect(has(caps.eff, SYS_ADMIN), `${record}: CapEff`).toBe(false);
      expect(has(caps.prm, SYS_ADMIN), `${record}: CapPrm`).toBe(false);
      expect(has(caps.bnd, SYS_ADMIN), `${record}: CapBnd`).toBe(false);
      expect(has(caps.eff, NET_ADMIN), `${record}: NET_ADMIN`).toBe(true);
      expect(has(caps.eff, NET_RAW), `${record}: NET_RAW`).toBe(true);
    }
  });

  // The agent as the printed DaemonSet runs it: uid 0 with only the capabilities it adds. Without
  // CAP_SETPCAP setpriv skips the bounding drop silently, so this case proves the printed set suffices.
  it('does so under exactly the capabilities the printed DaemonSet grants (the built reader)', () => {
    const nft = recorder('nft', '{"nftables": [{"metainfo": {"json_schema_version": 1}}]}');
    const save = recorder('iptables-nft-save', '# empty');
    const granted = RECHECK_CAPABILITIES.map((cap) => `+${cap.toLowerCase()}`).join(',');
    const reader = fileURLToPath(new URL('../../../dist/node-agent/recheck/netns-rules.js', import.meta.url));
    const script = [
      `const { readPodRules } = await import(${JSON.stringify(reader)});`,
      `await readPodRules(${JSON.stringify(`/run/netns/${namespace}`)}, ['ipv4'], 5000);`,
      `process.stdout.write((await import('node:fs')).readFileSync('/proc/self/status', 'utf8'));`,
    ].join('\n');
    const agentStatus = execFileSync(
      'setpriv',
      [
        '--inh-caps=-all',
        `--bounding-set=-all,${granted}`,
        '--',
        process.execPath,
        '--input-type=module',
        '-e',
        script,
      ],
      {
        env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` },
        encoding: 'utf8',
      },
    );
    // The agent itself held SYS_ADMIN (setns needs it): the drop is the children's, not inherited.
    const agentBnd = BigInt(`0x${/^CapBnd:\s*([0-9a-f]+)$/m.exec(agentStatus)![1]!}`);
    expect(has(agentBnd, SYS_ADMIN)).toBe(true);
    for (const record of [nft, save]) {
      const caps = capsOf(record);
      expect(has(caps.eff, SYS_ADMIN), `${record}: CapEff`).toBe(false);
      expect(has(caps.bnd, SYS_ADMIN), `${record}: CapBnd`).toBe(false);
      expect(has(caps.eff, NET_ADMIN), `${record}: NET_ADMIN`).toBe(true);
      expect(has(caps.eff, NET_RAW), `${record}: NET_RAW`).toBe(true);
    }
  });

  // nft -j builds its whole listing in memory before it prints (46 MB of RSS for 5,000 rules here,
  // 235 MB in the issue's case): the output cap bounds what the agent reads, not what the child uses.
  it('each tool runs under its own address-space limit', async () => {
    const nft = recorder('nft', '{"nftables": [{"metainfo": {"json_schema_version": 1}}]}');
    const save = recorder('iptables-nft-save', '# empty');
    process.env.PATH = `${dir}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}`;
    const { readPodRules } = await import('../../../src/node-agent/recheck/netns-rules.js');
    await readPodRules(`/run/netns/${namespace}`, ['ipv4'], 5_000);
    for (const record of [nft, save]) {
      const line = /^Max address space\s+(\S+)\s+(\S+)/m.exec(readFileSync(`${record}.limits`, 'utf8'))!;
      expect(line[1], record).not.toBe('unlimited');
      expect(Number(line[1])).toBeLessThanOrEqual(64 * 1024 * 1024);
    }
  });
});
