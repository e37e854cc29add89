import { describe, expect, it } from 'vitest';
import { ALL_FLAGS, commandsOf } from '../../src/cli/all-flags.js';
import { commandSpec } from '../../src/cli/command-table.js';
import { parseBoolean } from '../../src/config/flag-parsers.js';
import { parseCommandLine } from '../../src/config/parse-command-line.js';

/**
 * One rule for every environment variable: it is parsed by its flag's own parser, so a value the
 * flag refuses on the command line is refused from the environment too (never silently false),
 * and every switch read from the environment takes the same words.
 */
const TEXTS = [
  'garbage',
  '',
  ' ',
  'true',
  'TRUE',
  'false',
  '1',
  '0',
  'yes',
  'off',
  '80',
  '10s',
  'linkerd',
  'a,b',
  '-1',
];
const flagsOf = (command: string) => commandSpec(command)?.flags ?? [];
const withEnv = ALL_FLAGS.filter((flag) => flag.env !== undefined);

const outcome = (result: ReturnType<typeof parseCommandLine>, name: string) =>
  result.ok ? { ok: true, value: result.value.values.get(name) } : { ok: false };

describe('every flag with an environment variable', () => {
  it('finds them', () => {
    expect(withEnv.map((flag) => flag.env)).toEqual(
      expect.arrayContaining(['INTERLOCK_REPORT_EVENT', 'INTERLOCK_MESH', 'INTERLOCK_CNI_AUDIT', 'INTERLOCK_TPROXY']),
    );
  });

  for (const flag of withEnv.filter((f) => f.kind === 'switch'))
    it(`${flag.env} (a switch) takes exactly the words every switch takes`, () => {
      for (const text of TEXTS) expect(flag.parse(text), JSON.stringify(text)).toEqual(parseBoolean(text));
      for (const command of commandsOf(flag)) {
        const garbage = parseCommandLine(command, [], { [flag.env ?? '']: 'garbage' }, flagsOf(command));
        expect(garbage.ok, `${command}: ${flag.env}=garbage`).toBe(false);
        if (!garbage.ok) expect(garbage.error.message).toContain(flag.env);
        const on = parseCommandLine(command, [], { [flag.env ?? '']: 'true' }, flagsOf(command));
        expect(outcome(on, flag.name)).toEqual(
          outcome(parseCommandLine(command, [`--${flag.name}`], {}, flagsOf(command)), flag.name),
        );
      }
    });

  for (const flag of withEnv.filter((f) => f.kind === 'value'))
    it(`${flag.env} is read as --${flag.name}=VALUE is`, () => {
      for (const command of commandsOf(flag))
        for (const text of TEXTS) {
          const fromEnv = parseCommandLine(command, [], { [flag.env ?? '']: text }, flagsOf(command));
          const fromArgv = parseCommandLine(command, [`--${flag.name}=${text}`], {}, flagsOf(command));
          expect(outcome(fromEnv, flag.name), `${command} ${flag.env}=${JSON.stringify(text)}`).toEqual(
            outcome(fromArgv, flag.name),
          );
        }
    });
});
