import { describe, expect, it } from 'vitest';
import { runHelp } from '../../src/cli/help-command.js';
import { COMMANDS, commandSpec } from '../../src/cli/command-table.js';
import { formatCommandHelp, formatTopHelp } from '../../src/cli/help.js';

describe('interlock help answers its own --help', () => {
  for (const argv of [['--help'], ['-h'], ['help', '--help']]) {
    it(`interlock help ${argv.join(' ')} prints the commands and exits 0`, () => {
      const outcome = runHelp(argv, 80);
      expect(outcome.exitCode, outcome.stderr).toBe(0);
      expect(outcome.stdout).toBe(formatTopHelp(COMMANDS, 80));
    });
  }

  it("interlock help manifest --help prints manifest's help and exits 0", () => {
    const spec = commandSpec('manifest');
    if (!spec) throw new Error('no manifest command');
    const outcome = runHelp(['manifest', '--help'], 80);
    expect(outcome.exitCode, outcome.stderr).toBe(0);
    expect(outcome.stdout).toBe(formatCommandHelp(spec, 80));
  });

  it('still refuses two commands and an unknown one', () => {
    expect(runHelp(['manifest', 'inject'], 80).exitCode).toBe(64);
    expect(runHelp(['--helq'], 80).exitCode).toBe(64);
  });
});
