import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ALL_FLAGS } from '../../src/cli/all-flags.js';
import { EXPLAIN_HELP } from '../../src/cli/explain-command.js';
import { formatHelp, VALIDATE_SUMMARY } from '../../src/cli/help.js';
import { exitCodeTable, flagTable, reasonTable, replaceGenerated } from '../../src/cli/readme-tables.js';
import { EXIT, RESERVED_EXIT_CODES } from '../../src/config/exit-codes.js';
import { VALIDATE_FLAGS } from '../../src/config/validate-config.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('the README is generated from the flag table and the exit-code table', () => {
  it('the flag table in the README is what `npm run docs` writes (regenerate it when this fails)', () => {
    expect(replaceGenerated(README, 'flags', flagTable(ALL_FLAGS))).toBe(README);
  });

  it('the reasons table in the README is what `npm run docs` writes, from the one Reason union', () => {
    expect(replaceGenerated(README, 'reasons', reasonTable())).toBe(README);
  });

  it('the exit-code table in the README is what `npm run docs` writes', () => {
    expect(replaceGenerated(README, 'exit-codes', exitCodeTable())).toBe(README);
  });

  it('the check can fail: a README missing a flag row or an exit code differs', () => {
    const withoutRow = README.replace(/^\| `--drop-invalid`.*\n/m, '');
    expect(withoutRow).not.toBe(README);
    expect(replaceGenerated(withoutRow, 'flags', flagTable(ALL_FLAGS))).not.toBe(withoutRow);
    const wrongCode = README.replace('| 74 |', '| 75 |');
    expect(replaceGenerated(wrongCode, 'exit-codes', exitCodeTable())).not.toBe(wrongCode);
  });

  it('every exit code of the table is reserved and appears in the README', () => {
    for (const code of Object.values(EXIT)) {
      expect(RESERVED_EXIT_CODES).toContain(code);
      expect(README).toContain(`| ${code} |`);
    }
  });
});

describe('the flag table itself', () => {
  it('every flag once, every variable once; help and version never from the environment', () => {
    const names = ALL_FLAGS.map((flag) => flag.name);
    expect(new Set(names).size).toBe(names.length);
    const envs = ALL_FLAGS.flatMap((flag) => (flag.env ? [flag.env] : []));
    expect(new Set(envs).size).toBe(envs.length);
    for (const name of ['help', 'version']) expect(ALL_FLAGS.find((flag) => flag.name === name)?.env).toBeUndefined();
  });

  it('--help of each command lists every flag the command takes', () => {
    const help = formatHelp('validate', VALIDATE_SUMMARY, VALIDATE_FLAGS);
    for (const flag of ALL_FLAGS) {
      expect(
        help.includes(`--${flag.name} `) || help.includes(`--${flag.name}\n`) || help.includes(`--${flag.name}  `),
        flag.name,
      ).toBe(flag.commands.includes('validate'));
      if (flag.commands.includes('explain')) expect(EXPLAIN_HELP, flag.name).toContain(`--${flag.name}`);
    }
  });
});
