import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../adversarial/cli-run.js';
import { COMMANDS } from '../../src/cli/command-table.js';
import { runBare } from '../../src/cli/help-command.js';
import { flagUsage, formatCommandHelp, formatHelp, wrap } from '../../src/cli/help.js';
import { VALIDATE_FLAGS } from '../../src/config/validate-config.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
/** The build stamps the commit it was built at: this checkout's HEAD or one before it. */
function isThisCheckoutsCommit(commit: string): boolean {
  try {
    execFileSync('git', ['merge-base', '--is-ancestor', commit, 'HEAD'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The version block every command prints for --version, and `interlock version` too. */
function expectVersionText(stdout: string): void {
  const lines = stdout.split('\n');
  expect(lines[0]).toBe(`interlock ${version}`);
  expect(lines[1]).toMatch(/^commit: [0-9a-f]{40}$/);
  expect(lines[2]).toMatch(/^built: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  expect(lines[3]).toBe(`node: ${process.version}`);
}

describe('every command answers --help, -h and --version (the built CLI, stdout not a terminal)', () => {
  for (const spec of COMMANDS) {
    // validate's own switches exit 64 (issue 43): a pod's args ["--help"] are exactly that argv.
    const switchExit = spec.name === 'validate' ? 64 : 0;
    it(`interlock ${spec.name} --help and -h: one layout, 80 columns, every flag, exit ${switchExit}`, async () => {
      const [long, short, viaHelp] = await Promise.all([
        runCommand([spec.name, '--help']),
        runCommand([spec.name, '-h']),
        runCommand(['help', spec.name]),
      ]);
      for (const run of [long, short]) expect(run.exitCode, run.stderr).toBe(switchExit);
      expect(viaHelp.exitCode, viaHelp.stderr).toBe(0);
      for (const run of [long, short, viaHelp]) expect(run.stdout).toBe(long.stdout);
      const help = long.stdout;
      expect(help.startsWith(`Usage: interlock ${spec.name}`)).toBe(true);
      expect(help).toContain(`\n\n${spec.summary.slice(0, 40)}`);
      for (const section of ['\nFlags:\n', '\nExit codes:\n']) expect(help).toContain(section);
      for (const flag of spec.flags) {
        expect(help, flag.name).toContain(`  ${flagUsage(flag)}`);
        if (flag.env) expect(help, flag.env).toMatch(new RegExp(`\\n  ${flag.env} +--${flag.name}\\n`));
      }
      for (const line of help.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
      expect(help).toBe(formatCommandHelp(spec, 80));
    });

    it(`interlock ${spec.name} --version prints the version, commit, build date and Node version`, async () => {
      const run = await runCommand([spec.name, ...(spec.positional ? [spec.positional[0] ?? ''] : []), '--version']);
      expect(run.exitCode, run.stderr).toBe(switchExit);
      expectVersionText(run.stdout);
    });
  }

  it('interlock version, --version and version --output json agree; the build stamped its commit', async () => {
    const [text, flag, json] = await Promise.all([
      runCommand(['version']),
      runCommand(['--version']),
      runCommand(['version', '--output', 'json']),
    ]);
    expectVersionText(text.stdout);
    expect(flag.stdout).toBe(text.stdout);
    const info = JSON.parse(json.stdout) as Record<string, string>;
    expect(Object.keys(info).sort()).toEqual(['buildDate', 'commit', 'node', 'version']);
    expect(info.version).toBe(version);
    expect(info.node).toBe(process.version);
    expect(text.stdout).toContain(`commit: ${info.commit}\nbuilt: ${info.buildDate}\n`);
    // `npm run build` ran in this checkout (npm test builds first, at HEAD).
    expect(isThisCheckoutsCommit(info.commit ?? ''), info.commit).toBe(true);
    expect(isThisCheckoutsCommit('0'.repeat(40))).toBe(false);
  });

  it('the start-up snapshot carries the same stamp', async () => {
    const [snapshot, modules] = await Promise.all([
      runCommand(['version', '--output', 'json'], { launcher: 'snapshot' }),
      runCommand(['version', '--output', 'json']),
    ]);
    expect(snapshot.exitCode, snapshot.stderr).toBe(0);
    const info = JSON.parse(snapshot.stdout) as Record<string, string>;
    expect(info.commit).toBe((JSON.parse(modules.stdout) as Record<string, string>).commit);
    expect(info.buildDate).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('a --help after a bad environment variable still prints the help', async () => {
    const run = await runCommand(['validate', '--help'], { env: { INTERLOCK_TIMEOUT: 'soon' } });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toMatch(/^interlock validate: ConfigInvalid: validate --help prints the usage/);
    expect(run.stdout).toMatch(/^Usage: interlock validate/);
  });
});

describe('one error form: `interlock CMD: Reason: sentence`, one hint line, exit 64', () => {
  for (const spec of COMMANDS) {
    it(`interlock ${spec.name} --bogus`, async () => {
      const args = [spec.name, ...(spec.positional ? [spec.positional[0] ?? ''] : []), '--bogus'];
      const run = await runCommand(spec.name === 'completion' ? [spec.name, 'tcsh'] : args);
      expect(run.exitCode).toBe(64);
      expect(run.stdout).toBe('');
      const lines = run.stderr.split('\n');
      expect(lines).toHaveLength(3); // two lines and the final newline
      expect(lines[0]).toMatch(new RegExp(`^interlock ${spec.name}: ConfigInvalid: \\S`));
      expect(lines[1]).toBe(`Run 'interlock ${spec.name} --help' for its usage.`);
      expect(run.stderr).not.toContain('=""');
    });
  }

  it('an unknown flag is named alone, and a near one suggested', async () => {
    const run = await runCommand(['validate', '--timout', '1s']);
    expect(run.stderr.split('\n')[0]).toBe(
      'interlock validate: ConfigInvalid: --timout: unknown flag for interlock validate; did you mean --timeout?',
    );
  });

  it('interlock alone prints the commands; exit 0 at a terminal, 64 elsewhere (a container proved nothing)', async () => {
    const run = await runCommand([]);
    expect(run.exitCode).toBe(64);
    expect(run.stdout).toMatch(/^Usage: interlock COMMAND/);
    expect(run.stdout).toMatch(/^ {2}validate /m);
    expect(run.stderr).toBe(
      "interlock: ConfigInvalid: no command given (an init container runs 'interlock validate')\n",
    );
    const atTerminal = runBare(80, true);
    expect(atTerminal).toEqual({ exitCode: 0, stdout: run.stdout, stderr: '' });
  });

  it('interlock help help prints the commands, exit 0', async () => {
    const run = await runCommand(['help', 'help']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Usage: interlock COMMAND/);
  });

  it('-f, -o and the old --format name work; -f and -o are in help', async () => {
    expect((await runCommand(['inject', '--help'])).stdout).toMatch(/^ {2}-f, --filename FILE\|-/m);
    expect((await runCommand(['manifest', '--help'])).stdout).toMatch(/^ {2}-o, --output yaml\|json/m);
    const json = await runCommand(['manifest', '--mesh', 'istio', '--image', 'r.example/i:1', '-o', 'json']);
    expect(json.exitCode, json.stderr).toBe(0);
    expect(() => JSON.parse(json.stdout)).not.toThrow();
    expect(JSON.parse((await runCommand(['version', '-o', 'json'])).stdout)).toHaveProperty('version');
    for (const spelling of [
      ['-o', 'json'],
      ['--output', 'json'],
      ['--format', 'json'],
    ]) {
      const run = await runCommand([
        'cni-check',
        '--mesh',
        'linkerd',
        '--cni-conf-dir',
        '/nonexistent-dir',
        ...spelling,
      ]);
      expect(run.exitCode, spelling.join(' ')).toBe(66);
    }
    const both = await runCommand(['cni-check', '--mesh', 'linkerd', '--format', 'json', '--output', 'text']);
    expect(both.exitCode).toBe(64);
    expect((await runCommand(['explain', '--help'])).stdout).toMatch(/^ {2}-o, --output text\|json/m);
  });

  for (const args of [['nosuch'], ['help', 'nosuch']]) {
    it(`interlock ${args.join(' ')}: no command it has, one error and a hint`, async () => {
      const run = await runCommand(args);
      expect(run.exitCode).toBe(64);
      expect(run.stderr).toMatch(/^interlock: ConfigInvalid: .*\nRun 'interlock help' for the commands\.\n$/);
    });
  }

  it('the node agent says what is wrong in one line, not followed by its help', async () => {
    const run = await runCommand(['node', '--mesh', 'linkerd']);
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toBe(
      "interlock node: ConfigInvalid: --node-name is required (or NODE_NAME from the downward API)\nRun 'interlock node --help' for its usage.\n",
    );
  });
});

describe('wrap', () => {
  it('keeps every line within the width, and a longer word on a line of its own', () => {
    const lines = wrap('a '.repeat(50) + 'x'.repeat(30) + ' b', 20, 4);
    for (const line of lines) expect(line === `    ${'x'.repeat(30)}` || line.length <= 20, line).toBe(true);
    expect(lines.join(' ').replace(/\s+/g, ' ').trim()).toBe(`${'a '.repeat(50)}${'x'.repeat(30)} b`);
  });
});

describe('formatHelp, for a command not yet in the command table', () => {
  it('prints the same layout from a summary and flags', () => {
    const help = formatHelp('validate', 'One line.\n\nA longer description.', VALIDATE_FLAGS);
    expect(help.startsWith('Usage: interlock validate [flags]\n\nOne line.\n\nA longer description.\n\nFlags:\n')).toBe(
      true,
    );
    expect(help).not.toContain('Exit codes:');
    for (const line of help.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  });
});
