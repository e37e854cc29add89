import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/command-table.js';
import { replaceGenerated, troubleshootingTable } from '../../src/cli/readme-tables.js';
import { REASON_GUIDE } from '../../src/reason/guide.js';
import { REASONS } from '../../src/reason/reason.js';

const DOC = readFileSync(new URL('../../docs/troubleshooting.md', import.meta.url), 'utf8');

/** The reason of every table row of the generated block, as written in the file. */
function rowReasons(doc: string): string[] {
  const block = doc.slice(
    doc.indexOf('<!-- generated:troubleshooting -->'),
    doc.indexOf('<!-- /generated:troubleshooting -->'),
  );
  return [...block.matchAll(/^\| `([A-Za-z]+)` \|/gm)].map((match) => match[1] ?? '');
}

describe('docs/troubleshooting.md: a row per reason (issue #36 item 18)', () => {
  it('the table is what `npm run docs` writes from the Reason union and the reason guide', () => {
    expect(replaceGenerated(DOC, 'troubleshooting', troubleshootingTable())).toBe(DOC);
  });

  it('every Reason has exactly one row, and no row names a reason that does not exist', () => {
    const rows = rowReasons(DOC);
    expect([...rows].sort()).toEqual(Object.keys(REASONS).sort());
    expect(new Set(rows).size).toBe(rows.length);
  });

  it('each row says what it means, what to check and what to run', () => {
    for (const [reason, guide] of Object.entries(REASON_GUIDE)) {
      const row = DOC.split('\n').find((line) => line.startsWith(`| \`${reason}\` |`)) ?? '';
      expect(row, reason).toContain(guide.check.replace(/\|/g, '\\|'));
      expect(row, reason).toContain(`\`${guide.run}\``);
      expect(row.split(' | ').length, reason).toBe(4);
    }
  });

  it('the check can fail: a missing row is found', () => {
    const without = DOC.replace(/^\| `RulesMismatch` .*\n/m, '');
    expect(without).not.toBe(DOC);
    expect(rowReasons(without)).not.toContain('RulesMismatch');
    expect(replaceGenerated(without, 'troubleshooting', troubleshootingTable())).not.toBe(without);
  });

  it('every command the table tells an operator to run is an interlock command that exists, or kubectl/ls', () => {
    // Every command of the registry, and help (the CLI's own, src/cli/help-command.ts).
    const commands = [...COMMANDS.map((command) => command.name), 'help'];
    expect(commands).toContain('validate');
    for (const guide of Object.values(REASON_GUIDE)) {
      const [tool, sub] = guide.run.split(' ');
      expect(['interlock', 'kubectl', 'ls'], guide.run).toContain(tool);
      if (tool === 'interlock') expect(commands, guide.run).toContain(sub);
    }
  });

  it('the pages it links to exist', () => {
    for (const [, target] of DOC.matchAll(/\]\((?!https?:)([^)#]+)(?:#[^)]*)?\)/g)) {
      expect(existsSync(new URL(`../../docs/${target}`, import.meta.url)), target).toBe(true);
    }
  });
});

describe('docs/troubleshooting.md: cni-check on the node (kubectl debug)', () => {
  const recipe = DOC.split('\n').find((line) => line.startsWith('kubectl debug node/'));

  it('runs cni-check on the node under --host-root /host, the directories from the runtime, every flag one cni-check takes', () => {
    expect(recipe, 'a kubectl debug node/NODE line').toBeDefined();
    const words = (recipe ?? '').split(/\s+/);
    const start = words.indexOf('cni-check');
    expect(words.slice(start - 2, start)).toEqual(['--', 'interlock']);
    const flags = words.slice(start + 1).filter((word) => word.startsWith('--'));
    const known = COMMANDS.find((spec) => spec.name === 'cni-check')?.flags.map((flag) => `--${flag.name}`) ?? [];
    for (const flag of flags) expect(known, flag).toContain(flag.split('=')[0]);
    expect(words[words.indexOf('--host-root') + 1]).toBe('/host');
    expect(words[words.indexOf('--cni-multus-conf-dir') + 1]).toMatch(/^\/host\//);
    // The runtime answers the conf and bin dirs (GKE's /home/kubernetes/bin too): none is guessed.
    expect(flags).not.toContain('--cni-conf-dir');
    expect(flags).not.toContain('--cni-bin-dir');
  });
});
