import { describe, expect, it } from 'vitest';
import { ALL_FLAGS } from '../../src/cli/all-flags.js';
import type { FlagDef } from '../../src/config/flag-def.js';
import { showListenAddress } from '../../src/config/flag-parsers.js';

const shown = (flag: FlagDef): string =>
  flag.showDefault
    ? flag.showDefault(flag.default)
    : typeof flag.default === 'string'
      ? flag.default
      : JSON.stringify(flag.default);

// A default is written once, in its declaration; a help text that spells it out again still
// compiles when the default changes, and then lies. `{default}` is written from the declaration.
describe('help texts write a declared default only through {default}', () => {
  const defaulted = ALL_FLAGS.filter((flag) => flag.default !== undefined);
  it('finds the flags with a default', () => expect(defaulted.length).toBeGreaterThan(20));
  for (const flag of defaulted)
    it(`--${flag.name}`, () => {
      const value = shown(flag);
      const restated = [`default ${value}`, `${value} (default)`, `default: ${value}`].filter((words) =>
        flag.help.includes(words),
      );
      expect(restated).toEqual([]);
    });
});

// A refusal's example is what the flag usually holds: a --metrics-bind refusal that offered the
// HTTPS port 8443 steered an operator onto the webhook's own serving port.
describe("a HOST:PORT flag's refusal offers its own default as the example", () => {
  const addresses = ALL_FLAGS.filter((flag) => flag.showDefault === showListenAddress);
  it('finds the HOST:PORT flags', () => expect(addresses.map((flag) => flag.name)).toContain('metrics-bind'));
  for (const flag of addresses)
    it(`--${flag.name}`, () => {
      const refused = flag.parse('not an address');
      expect(refused.ok).toBe(false);
      if (!refused.ok) expect(refused.error.message).toContain(`(${shown(flag)}, `);
    });
});
