import { describe, expect, it } from 'vitest';
import { parseCidr } from '../../src/addr/cidr.js';
import { formatIp, parseIp } from '../../src/addr/ip.js';
import { parsePortSet, portSetHas } from '../../src/addr/port-set.js';
import { parseDurationMs } from '../../src/config/duration.js';
import { RESERVED_EXIT_CODES } from '../../src/config/exit-codes.js';
import { parseCommandLine } from '../../src/config/parse-command-line.js';
import { buildValidateConfig, VALIDATE_FLAGS } from '../../src/config/validate-config.js';
import { truncateUtf8 } from '../../src/verdict/termination-message.js';
import { prng } from '../harness/prng.js';

const ALPHABET = [
  '0',
  '1',
  '9',
  '6',
  '5',
  ':',
  '-',
  ',',
  '.',
  '/',
  '*',
  ' ',
  '=',
  'a',
  'f',
  's',
  'm',
  '%',
  '\u00e9',
  '\u{1F600}',
  '\n',
  '\0',
  'x',
  '::',
  '4140',
  '65535',
  '65536',
  '10.0.0.1',
  'fd00::1',
];

function randomText(random: () => number, maxParts = 8): string {
  const parts = Math.floor(random() * maxParts);
  let text = '';
  for (let i = 0; i < parts; i++) text += ALPHABET[Math.floor(random() * ALPHABET.length)];
  return text;
}

const ITERATIONS = 3000;

describe('fuzzing the configuration: random flags and values never crash and never pass silently', () => {
  it(`${ITERATIONS} random argv/env combinations give a config or an error naming its source`, () => {
    const random = prng(0x1a7e10c);
    const names = VALIDATE_FLAGS.map((flag) => flag.name).filter((name) => name !== 'help' && name !== 'version');
    let errors = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const argv: string[] = [];
      const count = Math.floor(random() * 6);
      for (let j = 0; j < count; j++) {
        const name = random() < 0.9 ? names[Math.floor(random() * names.length)] : randomText(random, 3);
        const value = randomText(random);
        if (random() < 0.5) argv.push(`--${name}=${value}`);
        else argv.push(`--${name}`, value);
      }
      const env =
        random() < 0.3 ? { INTERLOCK_MESH: randomText(random, 2), INTERLOCK_TIMEOUT: randomText(random, 3) } : {};
      const raw = parseCommandLine('validate', argv, env, VALIDATE_FLAGS);
      if (!raw.ok) {
        errors++;
        expect(raw.error.message).toMatch(/^(-|INTERLOCK_|argument=)/);
        continue;
      }
      const built = buildValidateConfig(raw.value);
      if (!built.ok) {
        errors++;
        expect(built.error.message).toMatch(/^(--|INTERLOCK_)/);
      } else {
        const config = built.value;
        // Whatever got through is within bounds.
        expect(config.timeoutMs).toBeGreaterThanOrEqual(100);
        expect(config.interception.inboundPort).toBeGreaterThanOrEqual(1);
        expect(config.interception.outboundPort).not.toBe(config.interception.inboundPort);
        expect([...RESERVED_EXIT_CODES]).not.toContain(config.failureExitCode);
      }
    }
    expect(errors).toBeGreaterThan(ITERATIONS / 2);
  });

  it('address, CIDR, port and duration parsers reject or round-trip, never throw', () => {
    const random = prng(0xbeef);
    for (let i = 0; i < ITERATIONS; i++) {
      const text = randomText(random, 10);
      const ip = parseIp(text);
      if (ip) expect(parseIp(formatIp(ip))?.value).toBe(ip.value);
      const cidr = parseCidr(text);
      if (cidr) expect(cidr.prefix).toBeLessThanOrEqual(cidr.family === 'ipv4' ? 32 : 128);
      const ports = parsePortSet(text);
      if (ports.ok && ports.value.kind === 'ranges') {
        for (const range of ports.value.ranges) {
          expect(range.from).toBeGreaterThanOrEqual(1);
          expect(range.to).toBeLessThanOrEqual(65535);
          expect(portSetHas(ports.value, range.from)).toBe(true);
        }
      }
      const duration = parseDurationMs(text);
      if (duration !== undefined) expect(Number.isFinite(duration)).toBe(true);
    }
  });

  it('UTF-8 truncation of random text never exceeds the limit or splits a character', () => {
    const random = prng(7);
    for (let i = 0; i < 500; i++) {
      const text = randomText(random, 400);
      const limit = 16 + Math.floor(random() * 200);
      const cut = truncateUtf8(text, limit);
      expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(Math.max(limit, Buffer.byteLength(text) <= limit ? limit : 0));
      expect(cut.includes('\uFFFD') && !text.includes('\uFFFD')).toBe(false);
    }
  });
});
