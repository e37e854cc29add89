import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ALL_FLAGS } from '../../src/cli/all-flags.js';
import { COMMANDS } from '../../src/cli/command-table.js';
import { flagUsage, formatCommandHelp } from '../../src/cli/help.js';
import { manifestExample } from '../../src/cli/readme-examples.js';
import { exitCodeTable, flagTable, reasonTable, replaceGenerated } from '../../src/cli/readme-tables.js';
import { EXIT, FAILURE_EXIT_CODE_RANGE, RESERVED_EXIT_CODES } from '../../src/config/exit-codes.js';
import { parseFailureExitCode } from '../../src/config/flag-parsers.js';

// The tables live in docs/reference.md (the README links there); `npm run docs` writes them.
const REFERENCE = readFileSync(new URL('../../docs/reference.md', import.meta.url), 'utf8');

describe('docs/reference.md is generated from the flag table and the exit-code table', () => {
  it('the flag table in docs/reference.md is what `npm run docs` writes (regenerate it when this fails)', () => {
    expect(replaceGenerated(REFERENCE, 'flags', flagTable(ALL_FLAGS))).toBe(REFERENCE);
  });

  it('the reasons table in docs/reference.md is what `npm run docs` writes, from the one Reason union', () => {
    expect(replaceGenerated(REFERENCE, 'reasons', reasonTable())).toBe(REFERENCE);
  });

  it("docs/reference.md's init-container examples are what `interlock manifest` prints (npm run docs)", async () => {
    for (const mesh of ['linkerd', 'istio'] as const) {
      const example = await manifestExample(mesh);
      expect(example).toMatch(
        new RegExp(`^name: ${mesh === 'linkerd' ? 'linkerd-network-validator' : 'istio-validation'}$`, 'm'),
      );
      expect(replaceGenerated(REFERENCE, `manifest-${mesh}`, example)).toBe(REFERENCE);
    }
  });

  it('the exit-code table in docs/reference.md is what `npm run docs` writes', () => {
    expect(replaceGenerated(REFERENCE, 'exit-codes', exitCodeTable())).toBe(REFERENCE);
  });

  it('the check can fail: a reference page missing a flag row or an exit code differs', () => {
    const withoutRow = REFERENCE.replace(/^\| `--drop-invalid`.*\n/m, '');
    expect(withoutRow).not.toBe(REFERENCE);
    expect(replaceGenerated(withoutRow, 'flags', flagTable(ALL_FLAGS))).not.toBe(withoutRow);
    const wrongCode = REFERENCE.replace('| 74 |', '| 75 |');
    expect(replaceGenerated(wrongCode, 'exit-codes', exitCodeTable())).not.toBe(wrongCode);
  });

  it('every exit code of the table is reserved and appears in docs/reference.md', () => {
    for (const code of Object.values(EXIT)) {
      expect(RESERVED_EXIT_CODES).toContain(code);
      expect(REFERENCE).toContain(`| ${code} |`);
    }
  });
});

describe('the flag table itself', () => {
  it('every flag once per command, every variable once; help and version never from the environment', () => {
    for (const spec of COMMANDS) {
      const names = spec.flags.map((flag) => flag.name);
      expect(new Set(names).size, spec.name).toBe(names.length);
    }
    const envs = ALL_FLAGS.flatMap((flag) => (flag.env ? [flag.env] : []));
    expect(new Set(envs).size).toBe(envs.length);
    for (const name of ['help', 'version']) expect(ALL_FLAGS.find((flag) => flag.name === name)?.env).toBeUndefined();
  });

  it('--help of each command lists every flag the command takes, and no other', () => {
    for (const spec of COMMANDS) {
      const help = formatCommandHelp(spec, 80);
      for (const flag of ALL_FLAGS) {
        const listed = new RegExp(`^  ${flagUsage(flag).replace(/[|[\]]/g, '\\$&')}( |$)`, 'm').test(help);
        // Two flags may be written alike (`-o, --output text|json` of explain and of version).
        const takes = spec.flags.some((own) => own === flag || flagUsage(own) === flagUsage(flag));
        expect(listed, `${spec.name} --${flag.name}`).toBe(takes);
      }
    }
  });

  it("the --failure-exit-code range docs/reference.md states is the parser's, and its refusal names it", () => {
    const stated = /--failure-exit-code`\s+may be any of (\d+)-(\d+) except/.exec(REFERENCE);
    expect(stated).not.toBeNull();
    const [low, high] = [Number(stated?.[1]), Number(stated?.[2])];
    expect(`${low}-${high}`).toBe(FAILURE_EXIT_CODE_RANGE);
    expect(parseFailureExitCode(String(low)).ok).toBe(true);
    expect(parseFailureExitCode(String(high)).ok).toBe(true);
    for (const outside of [low - 1, high + 1, 0]) {
      const refused = parseFailureExitCode(String(outside));
      expect(refused.ok).toBe(false);
      expect(refused.ok ? '' : refused.error.message).toContain(`expected ${low}-${high} except`);
    }
  });
});
