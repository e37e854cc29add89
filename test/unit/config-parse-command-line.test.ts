import { commandSpec } from '../../src/cli/command-table.js';
import { describe, expect, it } from 'vitest';
import { echoValue, safeSentence } from '../../src/config/echo-value.js';
import { HELP_FLAG, VERSION_FLAG } from '../../src/config/command-flags.js';
import type { FlagDef } from '../../src/config/flag-def.js';
import { oneOf, parsePath, parsePort } from '../../src/config/flag-parsers.js';
import { parseCommandLine } from '../../src/config/parse-command-line.js';
import { flagSource, flagValue, flagValues } from '../../src/config/parsed-flags.js';
import { VALIDATE_FLAGS } from '../../src/config/validate-config.js';

// The one reader the other commands (manifest, inject, node, cni-check) are wired to: their own
// FlagDef arrays, the same rules.
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
  default: 9990,
};
const MODE: FlagDef<'a' | 'b'> = {
  name: 'mode',
  kind: 'value',
  placeholder: 'a|b',
  help: 'Mode.',
  parse: oneOf(['a', 'b']),
};
const DRY_RUN: FlagDef<boolean> = {
  name: 'dry-run',
  kind: 'switch',
  help: 'Dry run.',
  parse: () => ({ ok: true, value: true }),
};
const FLAGS: readonly FlagDef[] = [NAMESPACE, PORT, MODE, DRY_RUN, HELP_FLAG] as readonly FlagDef[];

const parse = (argv: string[], env: Record<string, string> = {}) => parseCommandLine('inject', argv, env, FLAGS);

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

describe('parseCommandLine: any command, its own FlagDefs', () => {
  it('values, defaults, sources; a repeatable flag collects every value', () => {
    const parsed = parse(['--namespace', 'a', '--namespace=b', '--dry-run']);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(flagValues(parsed.value, NAMESPACE)).toEqual(['a', 'b']);
    expect(flagValue(parsed.value, PORT)).toBe(9990);
    expect(flagSource(parsed.value, PORT)).toBeUndefined();
    expect(flagValue(parsed.value, DRY_RUN)).toBe(true);
    expect(flagValue(parsed.value, MODE)).toBeUndefined();
  });

  it('argv wins over the environment; a flag without env is never read from it', () => {
    const parsed = parse(['--port', '80'], {
      INTERLOCK_PORT: '81',
      INTERLOCK_MODE: 'a',
      INTERLOCK_HELP: 'true',
      INTERLOCK_DRY_RUN: 'true',
    });
    expect(parsed.ok && flagValue(parsed.value, PORT)).toBe(80);
    expect(parsed.ok && flagValue(parsed.value, MODE)).toBeUndefined();
    expect(parsed.ok && flagValue(parsed.value, HELP_FLAG)).toBeUndefined();
    expect(parsed.ok && flagValue(parsed.value, DRY_RUN)).toBeUndefined();
    const fromEnv = parse([], { INTERLOCK_PORT: '81' });
    expect(fromEnv.ok && flagSource(fromEnv.value, PORT)).toBe('INTERLOCK_PORT');
  });

  const refused: Array<[string[], RegExp]> = [
    [['--port', '1', '--port', '2'], /^--port="2": given 2 times/],
    [['--dry-run=false'], /^--dry-run="false": is a switch/],
    [['--help=0'], /^--help="0": is a switch/],
    [['--mode', ''], /^--mode="": expected one of a, b/],
    [['--mode'], /^--mode: needs a value/],
    [['--mode', '--dry-run'], /^--mode="--dry-run": needs a value/],
    [['--unknown'], /^--unknown: unknown flag for interlock inject/],
    [['-x'], /^-x: unknown flag/],
    [['positional'], /^argument="positional": unexpected argument/],
    [['--', '--port'], /^argument="--port": unexpected argument/],
    [['--timeout', '1s'], /^--timeout: unknown flag for interlock inject/],
  ];
  for (const [argv, pattern] of refused) {
    it(`refuses ${JSON.stringify(argv)}`, () => {
      const parsed = parse(argv);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) {
        expect(parsed.error.reason).toBe('ConfigInvalid');
        expect(parsed.error.message).toMatch(pattern);
      }
    });
  }

  it("a flag of another command's table is unknown here", () => {
    const explain = commandSpec('explain')?.flags ?? [];
    const refused = parseCommandLine('explain', ['--timeout', '5s'], {}, explain);
    expect(refused.ok ? undefined : refused.error.message).toMatch(/unknown flag for interlock explain/);
    expect(parseCommandLine('validate', ['--timeout', '5s'], {}, commandSpec('validate')?.flags ?? []).ok).toBe(true);
  });
});

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

describe('echoed values', () => {
  it('truncates at 64 code points with an ellipsis, escapes controls, bidi marks and quotes', () => {
    expect(echoValue('a'.repeat(100))).toBe(`${'a'.repeat(64)}…`);
    expect(echoValue('a'.repeat(64))).toBe('a'.repeat(64));
    expect(echoValue('\u202eab\u0007"\\\u2066')).toBe('\\u{202e}ab\\u{7}\\"\\\\\\u{2066}');
    expect(echoValue('\u{1F600}'.repeat(70))).toBe(`${'\u{1F600}'.repeat(64)}…`);
    expect(safeSentence(`"${'y'.repeat(1000)}" is bad\u202e`).length).toBeLessThan(310);
    expect(safeSentence('"q" is \n bad')).toBe('"q" is \\u{a} bad');
  });

  it('cuts a long sentence at 300 code points and marks the cut', () => {
    expect(safeSentence('a'.repeat(400))).toBe(`${'a'.repeat(300)}…`);
    expect(safeSentence('a'.repeat(300))).toBe('a'.repeat(300));
  });
});
