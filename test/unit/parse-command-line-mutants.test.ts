import { describe, expect, it } from 'vitest';
import { HELP_FLAG, VERSION_FLAG } from '../../src/config/command-flags.js';
import { safeSentence } from '../../src/config/echo-value.js';
import type { FlagDef } from '../../src/config/flag-def.js';
import { parsePath, parsePort } from '../../src/config/flag-parsers.js';
import { parseCommandLine } from '../../src/config/parse-command-line.js';
import { flagSource, flagValues } from '../../src/config/parsed-flags.js';
import { VALIDATE_FLAGS } from '../../src/config/validate-config.js';

const NAMESPACE: FlagDef<string> = {
  name: 'namespace',
  kind: 'value',
  env: 'INTERLOCK_NAMESPACE',
  placeholder: 'NS',
  help: 'Namespace.',
  parse: parsePath,
  repeatable: true,
};
const PORT: FlagDef<number> = {
  name: 'port',
  kind: 'value',
  env: 'INTERLOCK_PORT',
  placeholder: 'PORT',
  help: 'Port.',
  parse: parsePort,
};
const FLAGS: readonly FlagDef[] = [NAMESPACE, PORT, HELP_FLAG] as readonly FlagDef[];

function refusal(
  argv: string[],
  flags: readonly FlagDef[] = VALIDATE_FLAGS,
  command: 'validate' | 'inject' = 'validate',
): string {
  const parsed = parseCommandLine(command, argv, {}, flags);
  if (parsed.ok) throw new Error(`expected ${JSON.stringify(argv)} to be refused`);
  expect(parsed.error.reason).toBe('ConfigInvalid');
  return parsed.error.message;
}

describe('a repeatable flag', () => {
  it('from the environment is a list of its one value', () => {
    const parsed = parseCommandLine('inject', [], { INTERLOCK_NAMESPACE: 'prod' }, FLAGS);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(flagValues(parsed.value, NAMESPACE)).toEqual(['prod']);
    expect(flagSource(parsed.value, NAMESPACE)).toBe('INTERLOCK_NAMESPACE');
  });

  it('a default records no source: the operator did not give it', () => {
    const parsed = parseCommandLine('validate', ['--mesh', 'linkerd'], {}, VALIDATE_FLAGS);
    expect(parsed.ok && [...parsed.value.sources.keys()]).toEqual(['mesh']);
  });

  it('given nowhere has no values', () => {
    const parsed = parseCommandLine('inject', ['--port', '1'], {}, FLAGS);
    expect(parsed.ok && flagValues(parsed.value, NAMESPACE)).toEqual([]);
  });
});

// Which argument the refusal names matters: it is the one the operator has to change.
describe('the refusal names the argument at fault', () => {
  const cases: Array<[string[], string]> = [
    // A lone "-" (stdin to many tools) is a stray argument, not a flag named "-".
    [['-'], 'argument="-": unexpected argument (interlock validate takes flags only)'],
    [['--mesh', 'linkerd', '-'], 'argument="-": unexpected argument (interlock validate takes flags only)'],
    // "-" is a value a value flag may take; what follows it is still checked.
    [['--mesh', '-', 'x'], 'argument="x": unexpected argument (interlock validate takes flags only)'],
    // A value given inline is not followed by its value: the next argument stands alone.
    [['--mesh=linkerd', 'x'], 'argument="x": unexpected argument (interlock validate takes flags only)'],
    [['--mesh=linkerd', '--tproxy=1'], '--tproxy="1": is a switch and takes no value'],
    // A switch without "=" takes nothing, so the next argument is the stray one.
    [['--tproxy', 'x'], 'argument="x": unexpected argument (interlock validate takes flags only)'],
    [['--help', 'x'], 'argument="x": unexpected argument (interlock validate takes flags only)'],
    // An unknown flag is named as typed, dashes and all (`---mesh` is not `--mesh`); a near one is suggested.
    [['----nope'], '----nope: unknown flag for interlock validate'],
    [['-n'], '-n: unknown flag for interlock validate'],
    [['---mesh', 'linkerd'], '---mesh: unknown flag for interlock validate; did you mean --mesh?'],
    [['--nope=1'], '--nope: unknown flag for interlock validate'],
    // A lone `--` ends parseArgs' flags without an error of its own; it is still an argument.
    [['--mesh=linkerd', '--'], 'argument="--": unexpected argument (interlock validate takes flags only)'],
    [
      ['--mesh', '-x'],
      `--mesh="-x": ${safeSentence('needs a value; a value starting with "-" is written --mesh=VALUE')}`,
    ],
  ];
  for (const [argv, message] of cases) {
    it(JSON.stringify(argv), () => expect(refusal(argv)).toBe(message));
  }

  it('the same rules for another command and its own flags', () => {
    expect(refusal(['--port=1', 'x'], FLAGS, 'inject')).toBe(
      'argument="x": unexpected argument (interlock inject takes flags only)',
    );
    expect(refusal(['--port', '-', 'x'], FLAGS, 'inject')).toBe(
      'argument="x": unexpected argument (interlock inject takes flags only)',
    );
  });
});

describe('help and version', () => {
  it('their parsers refuse any text: they are read from the command line only', () => {
    for (const flag of [HELP_FLAG, VERSION_FLAG]) {
      expect(flag.env).toBeUndefined();
      expect(flag.parse('true')).toEqual({
        ok: false,
        error: { reason: 'ConfigInvalid', message: 'is read from the command line only' },
      });
    }
  });
});

describe('safeSentence', () => {
  it('cuts a long sentence at 300 code points and marks the cut', () => {
    expect(safeSentence('a'.repeat(400))).toBe(`${'a'.repeat(300)}…`);
    expect(safeSentence('a'.repeat(300))).toBe('a'.repeat(300));
  });
});
