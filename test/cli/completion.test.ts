import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MESHES } from '../../src/mesh/meshes.js';
import { runCommand } from '../adversarial/cli-run.js';
import { COMMANDS } from '../../src/cli/command-table.js';
import { valueKind } from '../../src/cli/completion.js';

const dir = mkdtempSync(join(tmpdir(), 'interlock-completion-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ZSH_DRIVER = new URL('./zsh-complete.zsh', import.meta.url).pathname;

/** The script `interlock completion SHELL` prints, from the built CLI, saved for the shell to load. */
async function script(shell: string): Promise<string> {
  const run = await runCommand(['completion', shell]);
  expect(run.exitCode, run.stderr).toBe(0);
  const path = join(dir, `interlock.${shell}`);
  writeFileSync(path, run.stdout);
  return path;
}

/** What bash's programmable completion offers for the words, the cursor on the last one. */
function bashComplete(path: string, words: readonly string[]): string[] {
  const program = `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _interlock; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const out = execFileSync('bash', ['--norc', '-c', program, 'bash', path, ...words], { encoding: 'utf8', cwd: dir });
  return out.split('\n').filter((line) => line !== '');
}

function fishComplete(path: string, line: string): string[] {
  const out = execFileSync('fish', ['--no-config', '-c', `source ${path}; complete -C ${JSON.stringify(line)}`], {
    encoding: 'utf8',
    cwd: dir,
  });
  return out.split('\n').flatMap((entry) => (entry === '' ? [] : [entry.split('\t')[0] ?? '']));
}

function zshComplete(path: string, line: string): string[] {
  const out = execFileSync('zsh', ['-f', ZSH_DRIVER, path, line, join(dir, 'zsh.out')], {
    encoding: 'utf8',
    cwd: dir,
    timeout: 60_000,
  });
  return out.split('\n').filter((entry) => entry !== '');
}

const commandNames = [...COMMANDS.map((spec) => spec.name), 'help'];

describe('bash: the script registers with complete and offers what the command table says', () => {
  it('complete -p names the function; commands, flags and choices complete', async () => {
    const path = await script('bash');
    expect(
      execFileSync('bash', ['--norc', '-c', 'source "$1"; complete -p interlock', 'bash', path], { encoding: 'utf8' }),
    ).toBe('complete -F _interlock interlock\n');
    expect(bashComplete(path, ['interlock', '']).sort()).toEqual([...commandNames].sort());
    expect(bashComplete(path, ['interlock', 'cn'])).toEqual(['cni-check']);
    expect(bashComplete(path, ['interlock', 'validate', '--me'])).toEqual(['--mesh']);
    expect(bashComplete(path, ['interlock', 'validate', '--mesh', ''])).toEqual([...MESHES]);
    expect(bashComplete(path, ['interlock', 'node', '--log-level', 'w'])).toEqual(['warn']);
    expect(bashComplete(path, ['interlock', 'completion', ''])).toEqual(
      expect.arrayContaining(['bash', 'zsh', 'fish']),
    );
    // A value with no choices offers nothing, never the flags.
    expect(bashComplete(path, ['interlock', 'validate', '--inbound-port', ''])).toEqual([]);
    // A flag of another command is not offered.
    expect(bashComplete(path, ['interlock', 'validate', '--iptables-s'])).toEqual([]);
    expect(bashComplete(path, ['interlock', 'explain', '--iptables-s'])).toEqual(['--iptables-save']);
    writeFileSync(join(dir, 'rules.v4'), '');
    expect(bashComplete(path, ['interlock', 'explain', '--iptables-save', 'rules'])).toEqual(['rules.v4']);
  });

  it('every flag of every command completes after its command', async () => {
    const path = await script('bash');
    for (const spec of COMMANDS) {
      const offered = bashComplete(path, ['interlock', spec.name, '-']);
      for (const flag of spec.flags) expect(offered, `${spec.name} --${flag.name}`).toContain(`--${flag.name}`);
    }
  });
});

describe('fish and zsh, driven for real', () => {
  it('fish: commands, flags, choices', async () => {
    const path = await script('fish');
    expect(fishComplete(path, 'interlock cn')).toEqual(['cni-check']);
    expect(fishComplete(path, 'interlock validate --me')).toEqual(['--mesh']);
    expect(fishComplete(path, 'interlock validate --mesh ').sort()).toEqual([...MESHES].sort());
    expect(fishComplete(path, 'interlock completion ').sort()).toEqual(['bash', 'fish', 'zsh']);
  });

  it('zsh: commands, flags, choices (an interactive zsh, Tab through zpty)', async () => {
    const path = await script('zsh');
    expect(zshComplete(path, 'interlock cni')).toEqual(['cni-check']);
    expect(zshComplete(path, 'interlock validate --mesh ')).toEqual([...MESHES].sort());
    expect(zshComplete(path, 'interlock explain --iptables-b')).toEqual(['--iptables-backend']);
    expect(zshComplete(path, 'interlock version --output ')).toEqual(['json', 'text']);
  });
});

describe('completion kinds come from the flag table', () => {
  it('every value flag either offers choices, names files or directories, or nothing on purpose', () => {
    const kinds = new Map<string, string>();
    for (const spec of COMMANDS)
      for (const flag of spec.flags) if (flag.kind === 'value') kinds.set(flag.name, valueKind(flag).kind);
    expect(kinds.get('mesh')).toBe('choices');
    expect(kinds.get('log-level')).toBe('choices');
    expect(kinds.get('iptables-save')).toBe('files');
    expect(kinds.get('cni-conf-dir')).toBe('dirs');
    expect(kinds.get('inbound-port')).toBe('none');
  });

  it('an unknown shell is a usage error', async () => {
    const run = await runCommand(['completion', 'tcsh']);
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toMatch(/^interlock completion: ConfigInvalid: expected one shell: bash, zsh, fish\n/);
  });
});

describe('completion offers what an operator reaches for (files after -f, choices, node flags)', () => {
  it('bash: files after inject -f, Ignore|Fail after --failure-policy, node flags under manifest --node-agent', async () => {
    const path = await script('bash');
    writeFileSync(join(dir, 'web-deploy.yaml'), 'kind: Pod\n');
    expect(bashComplete(path, ['interlock', 'inject', '-f', 'web-'])).toEqual(['web-deploy.yaml']);
    expect(bashComplete(path, ['interlock', 'inject', '--filename', 'web-'])).toEqual(['web-deploy.yaml']);
    expect(bashComplete(path, ['interlock', 'inject', '-'])).toEqual(expect.arrayContaining(['-f', '--filename']));
    expect(bashComplete(path, ['interlock', 'manifest', '--webhook', '--failure-policy', ''])).toEqual([
      'Ignore',
      'Fail',
    ]);
    expect(bashComplete(path, ['interlock', 'manifest', '--node-agent', '--ac'])).toEqual(['--action']);
    expect(bashComplete(path, ['interlock', 'manifest', '-o', ''])).toEqual(['yaml', 'json']);
    expect(bashComplete(path, ['interlock', 'explain', '-o', ''])).toEqual(['text', 'json']);
  });

  it('fish: -f and --failure-policy values', async () => {
    const path = await script('fish');
    expect(fishComplete(path, 'interlock manifest --webhook --failure-policy ').sort()).toEqual(['Fail', 'Ignore']);
    expect(fishComplete(path, 'interlock inject -')).toEqual(expect.arrayContaining(['-f']));
  });
});
