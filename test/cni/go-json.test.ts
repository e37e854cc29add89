import { describe, expect, it } from 'vitest';
import { decodeGoJson } from '../../src/cni/go-json.js';
import { jsonShape } from '../../src/cni/json-prefix.js';
import { prng } from '../harness/prng.js';

describe('a file a writer has not finished (partial) is told from one that is broken', () => {
  const full = JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'net',
      plugins: [
        { type: 'bridge', ipam: { type: 'host-local', ranges: [[{ subnet: '10.1.0.0/16' }]] } },
        { type: 'x', n: -1.5e3, ok: true, no: null },
      ],
    },
    null,
    1,
  );

  it('every strict prefix of a document is partial, the whole is a value', () => {
    for (let length = 0; length < full.length; length++)
      expect(decodeGoJson(full.slice(0, length)).kind, `prefix of ${length}`).toBe('partial');
    expect(decodeGoJson(full).kind).toBe('value');
  });

  it('malformed text is invalid, with where', () => {
    expect(decodeGoJson('{"a":1,}')).toEqual({ kind: 'invalid', message: expect.stringContaining('line 1') });
    expect(decodeGoJson('{"a":1} {')).toMatchObject({ kind: 'invalid' });
    expect(decodeGoJson("{'a':1}")).toMatchObject({ kind: 'invalid' });
    expect(decodeGoJson('{"a":tru}')).toMatchObject({ kind: 'invalid' });
    expect(decodeGoJson('{"a":01}')).toMatchObject({ kind: 'invalid' });
    expect(decodeGoJson('\uFEFF{}')).toMatchObject({ kind: 'invalid' });
  });

  it('a number Go cannot hold in a float64 is invalid (JSON.parse would give Infinity)', () => {
    expect(decodeGoJson('{"mtu":1e999}')).toMatchObject({
      kind: 'invalid',
      message: expect.stringContaining('overflows'),
    });
  });

  it('agrees with JSON.parse on random mutations (seeded): complete exactly when JSON.parse accepts', () => {
    const random = prng(1212);
    const alphabet = ['{', '}', '[', ']', '"', ':', ',', 'a', '1', '-', '.', 'e', ' ', 'n', 't', '\\', 'u'];
    for (let i = 0; i < 3000; i++) {
      const chars = [...full];
      const edits = 1 + Math.floor(random() * 3);
      for (let e = 0; e < edits; e++)
        chars.splice(
          Math.floor(random() * chars.length),
          Math.floor(random() * 2),
          alphabet[Math.floor(random() * alphabet.length)] as string,
        );
      const text = chars.join('');
      let parses = true;
      try {
        JSON.parse(text);
      } catch {
        parses = false;
      }
      expect(jsonShape(text).kind === 'complete', text).toBe(parses);
    }
  });
});
