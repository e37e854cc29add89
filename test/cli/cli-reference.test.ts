import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../adversarial/cli-run.js';
import { cliReference } from '../../src/cli/cli-reference.js';
import { COMMANDS } from '../../src/cli/command-table.js';

const PAGE = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');

/** The ```text block under `## interlock NAME` in docs/cli.md. */
function section(page: string, title: string): string | undefined {
  const at = page.indexOf(`\n## ${title}\n`);
  if (at < 0) return undefined;
  const block = /```text\n([\s\S]*?)\n```/.exec(page.slice(at));
  return block ? `${block[1]}\n` : undefined;
}

describe('docs/cli.md is what the commands print for --help', () => {
  it('is what `npm run docs` writes (regenerate it when this fails)', () => {
    expect(cliReference(COMMANDS)).toBe(PAGE);
  });

  for (const spec of COMMANDS) {
    it(`## interlock ${spec.name} is \`interlock ${spec.name} --help\`, as the built CLI prints it`, async () => {
      const run = await runCommand([spec.name, '--help']);
      // validate's --help prints the usage and exits 64: a pod's args ["--help"] are that argv.
      expect(run.exitCode).toBe(spec.name === 'validate' ? 64 : 0);
      expect(section(PAGE, `interlock ${spec.name}`)).toBe(run.stdout);
    });
  }

  it('## interlock is `interlock help`', async () => {
    expect(section(PAGE, 'interlock')).toBe((await runCommand(['help'])).stdout);
  });

  it('the check can fail: a page with a flag missing differs', () => {
    const edited = PAGE.replace(/^ {2}--drop-invalid .*\n/m, '');
    expect(edited).not.toBe(PAGE);
    expect(section(edited, 'interlock validate')).not.toBe(section(PAGE, 'interlock validate'));
  });
});
