import { describe, expect, it } from 'vitest';
import { PRESETS } from '../../src/config/interception.js';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import {
  MAX_DUMP_BYTES,
  MAX_JSON_DEPTH,
  MAX_LIVE_DUMP_BYTES,
  MAX_NFT_JSON_BYTES,
  MAX_RULESET_BYTES,
} from '../../src/rules/limits.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import { classifyToolRun } from '../../src/rules/read/classify.js';
import { runReader } from '../../src/rules/read/read-live.js';
import { inspectLiveRules } from '../../src/rules-check/inspect.js';
import { failed } from '../../src/verdict/verdict-check.js';
import { decideVerdict } from '../../src/verdict/decide-verdict.js';

const save = (text: string) => parseIptablesSave(text, { backend: 'iptables-nft', family: 'ipv4', source: 'big.txt' });
const HEAD = '*nat\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:M - [0:0]\n';

describe('input size is capped with a distinct reason', () => {
  it('the caps are what the documentation says', () => {
    expect(MAX_DUMP_BYTES).toBe(16 * 1024 * 1024);
    expect(MAX_LIVE_DUMP_BYTES).toBe(1024 * 1024);
    expect(MAX_NFT_JSON_BYTES).toBe(2 * 1024 * 1024);
    expect(MAX_RULESET_BYTES).toBe(128 * 1024 * 1024);
    expect(MAX_JSON_DEPTH).toBe(64);
  });

  /** A dump of exactly `bytes` bytes: the Linkerd-free skeleton, comment lines, COMMIT. */
  function dumpOf(bytes: number): string {
    const tail = 'COMMIT\n';
    const room = bytes - HEAD.length - tail.length;
    const line = `# ${'x'.repeat(1021)}\n`;
    const lines = line.repeat(Math.floor(room / line.length));
    const last = room - lines.length;
    return `${HEAD}${lines}${last > 0 ? `#${'x'.repeat(last - 2)}\n` : ''}${tail}`;
  }

  it('an iptables-save dump one byte over the cap is RulesTooLarge, naming the cap', () => {
    const text = dumpOf(MAX_DUMP_BYTES + 1);
    expect(Buffer.byteLength(text)).toBe(MAX_DUMP_BYTES + 1);
    const parsed = save(text);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error.reason).toBe('RulesTooLarge');
    expect(parsed.error.message).toMatch(/larger than 16 MiB/);
  });

  it('a dump of exactly the cap still parses', () => {
    const text = dumpOf(MAX_DUMP_BYTES);
    expect(Buffer.byteLength(text)).toBe(MAX_DUMP_BYTES);
    expect(save(text).ok).toBe(true);
  });

  it('multi-byte characters count as bytes, not characters', () => {
    const text = `${HEAD}# ${'é'.repeat(MAX_DUMP_BYTES / 2)}\nCOMMIT\n`;
    expect(text.length).toBeLessThan(MAX_DUMP_BYTES);
    const parsed = save(text);
    expect(!parsed.ok && parsed.error.reason).toBe('RulesTooLarge');
  });

  it('a dump under the byte cap whose model would be over the memory cap is RulesTooLarge', () => {
    const rule = `-A M -s ${Array.from({ length: 40 }, (_, index) => `10.0.0.${index}`).join(',')} -j RETURN\n`;
    const count = Math.ceil(MAX_RULESET_BYTES / (42 * 160)) + 10;
    expect(HEAD.length + rule.length * count).toBeLessThan(MAX_DUMP_BYTES);
    const parsed = save(`${HEAD}${rule.repeat(count)}COMMIT\n`);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatchObject({ reason: 'RulesTooLarge' });
    if (!parsed.ok) expect(parsed.error.message).toMatch(/would take more than 128 MiB of memory to analyse/);
  });

  it('200k nft rules are RulesTooLarge, not half a gigabyte', () => {
    const items: unknown[] = [
      { table: { family: 'inet', name: 't' } },
      { chain: { family: 'inet', table: 't', name: 'o', type: 'nat', hook: 'output', prio: -100, policy: 'accept' } },
    ];
    for (let index = 0; index < 200_000; index++)
      items.push({ rule: { family: 'inet', table: 't', chain: 'o', expr: [{ return: null }] } });
    const text = JSON.stringify({ nftables: items });
    const parsed = parseNftJson(text, 'big.json');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.reason).toBe('RulesTooLarge');
  });

  it('JSON nested 100k deep is refused without a stack overflow', () => {
    const deep = `{"nftables":[{"rule":{"family":"inet","table":"t","chain":"o","expr":[${'['.repeat(100_000)}${']'.repeat(100_000)}]}}]}`;
    let parsed: ReturnType<typeof parseNftJson> | undefined;
    expect(() => {
      parsed = parseNftJson(deep, 'deep.json');
    }).not.toThrow();
    expect(parsed?.ok).toBe(false);
    if (parsed && !parsed.ok) expect(parsed.error.message).toMatch(/nested deeper than 64/);
  });
});

describe('a reader cut short says what happened and is never analysed', () => {
  const spec = { label: 'iptables-nft-save', backend: 'iptables-nft' as const, family: 'ipv4' as const };

  it('a timeout names the command, the time and the bytes printed', () => {
    const outcome = classifyToolRun(spec, {
      timedOut: true,
      exitCode: undefined,
      stdout: '*nat\n',
      stderr: '',
      elapsedMs: 2950,
    });
    expect(outcome).toEqual({
      kind: 'unreadable',
      command: 'iptables-nft-save',
      why: 'timed out after 2950 ms having printed 5 bytes; the partial output was not analysed',
    });
  });

  it('output over the live cap is refused as too large, naming the table and the cap, never half-read', () => {
    const outcome = classifyToolRun(spec, {
      timedOut: false,
      overflowed: true,
      exitCode: undefined,
      signal: 'SIGKILL',
      stdout: '',
      stdoutBytes: MAX_LIVE_DUMP_BYTES,
      table: 'nat',
      stderr: '',
      elapsedMs: 10,
    });
    expect(outcome).toEqual({
      kind: 'too-large',
      command: 'iptables-nft-save',
      backend: 'iptables-nft',
      family: 'ipv4',
      table: 'nat',
      why: "printed more than 1 MiB (stopped in the nat table), the limit for one pod's rules; a pod's NAT rules are a few kilobytes",
    });
  });

  it('a tool that runs out of its memory limit listing the rules is refused as too large', () => {
    for (const stderr of [
      'utils.c:38: Memory allocation failure\n',
      "nft: json.c:572: payload_expr_json: Assertion `__out' failed.\n",
    ]) {
      const outcome = classifyToolRun(
        { label: 'nft -j list ruleset', backend: 'nftables' },
        { timedOut: false, exitCode: undefined, signal: 'SIGABRT', stdout: '', stdoutBytes: 0, stderr, elapsedMs: 10 },
      );
      expect(outcome.kind).toBe('too-large');
      if (outcome.kind === 'too-large')
        expect(outcome.why).toMatch(/^ran out of its 64 MiB memory limit listing its rules/);
    }
  });

  it('a tool killed by a signal says which, never "exit undefined"', () => {
    const outcome = classifyToolRun(spec, {
      timedOut: false,
      exitCode: undefined,
      signal: 'SIGSEGV',
      stdout: '',
      stderr: '',
      elapsedMs: 10,
    });
    expect(outcome).toEqual({ kind: 'unreadable', command: 'iptables-nft-save', why: 'killed by SIGSEGV' });
  });

  it('for real: a reader printing past the live cap is stopped and refused, naming its table', async () => {
    const outcome = await runReader(
      {
        file: 'sh',
        args: ['-c', `printf '*nat\\n'; head -c ${MAX_LIVE_DUMP_BYTES + 1000} /dev/zero | tr '\\0' x`],
        backend: 'iptables-nft',
        family: 'ipv4',
      },
      10_000,
    );
    expect(outcome).toMatchObject({ kind: 'too-large', table: 'nat' });
    if (outcome.kind === 'too-large')
      expect(outcome.why).toMatch(/printed more than 1 MiB \(stopped in the nat table\)/);
  });

  it('for real: a reader that hangs after printing is reported with its byte count', async () => {
    const outcome = await runReader(
      { file: 'sh', args: ['-c', 'printf "*nat\\n"; exec sleep 20'], backend: 'iptables-nft', family: 'ipv4' },
      300,
    );
    expect(outcome.kind).toBe('unreadable');
    if (outcome.kind === 'unreadable')
      expect(outcome.why).toMatch(
        /^timed out after \d+ ms having printed 5 bytes; the partial output was not analysed$/,
      );
  });
});

describe('"Permission denied" and its siblings on stderr make an exit-0 read a failure', () => {
  const legacy = { label: 'iptables-legacy-save', backend: 'iptables-legacy' as const, family: 'ipv4' as const };
  for (const stderr of [
    'iptables-legacy-save: /proc/net/ip_tables_names: Permission denied',
    'iptables-legacy-save v1.8.9 (legacy): you must be root',
    "iptables-legacy-save v1.8.9 (legacy): can't initialize: Cannot initialize table",
    'Failed to list table names',
  ]) {
    it(stderr, () => {
      const outcome = classifyToolRun(legacy, {
        timedOut: false,
        exitCode: 0,
        stdout: '',
        stderr: `${stderr}\n`,
        elapsedMs: 1,
      });
      expect(outcome.kind).toBe('unreadable');
    });
  }

  it('a warning is not a failure', () => {
    const outcome = classifyToolRun(legacy, {
      timedOut: false,
      exitCode: 0,
      stdout: '',
      stderr: '# Warning: iptables-legacy tables present\n',
      elapsedMs: 1,
    });
    expect(outcome.kind).toBe('read');
  });
});

describe('an engine exception is an internal error, never "unreadable"', () => {
  it('inspectLiveRules answers RulesEngineError when deciding throws', async () => {
    const result = await inspectLiveRules(
      PRESETS.linkerd.spec,
      { families: ['ipv4'], mode: 'auto', timeoutMs: 1000 },
      {
        readCapabilities: async () => ({ netAdmin: true, netRaw: true }),
        readLiveRules: async () => [],
        decideInspection: () => {
          throw new RangeError('Maximum call stack size exceeded');
        },
      },
    );
    expect(result.status).toBe('unknown');
    expect(result.reason).toBe('RulesEngineError');
    expect(result.message).toMatch(/Maximum call stack size exceeded/);
  });

  it('a RulesEngineError check makes the verdict internal (exit 70)', () => {
    const verdict = decideVerdict({
      checks: [failed('rules', 'RulesEngineError', 'the rules engine failed', [], 'internal')],
      obligations: undefined,
      proofs: [],
    });
    expect(verdict.outcome).toBe('internal');
  });
});
