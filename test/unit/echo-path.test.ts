import { describe, expect, it } from 'vitest';
import { quoted, quotedPath } from '../../src/config/echo-value.js';

// A message names the file at fault whole: a kubelet's volume path runs past the 64 code points a
// flag value is cut at.
const KUBELET_PATH =
  '/var/lib/kubelet/pods/0e3c7a5e-9f41-4c1b-a7d2-5b1f3a9c0d11/volumes/kubernetes.io~configmap/rules/iptables-save.txt';

describe('quotedPath', () => {
  it('keeps a kubelet volume path whole, where a value is cut', () => {
    expect(KUBELET_PATH.length).toBeGreaterThan(64);
    expect(quotedPath(KUBELET_PATH)).toBe(`"${KUBELET_PATH}"`);
    expect(quoted(KUBELET_PATH)).toMatch(/…"$/);
  });

  it('still escapes what would rewrite the terminal, and still ends', () => {
    expect(quotedPath('/tmp/a\u202eb"c')).toBe('"/tmp/a\\u{202e}b\\"c"');
    const long = `/${'x'.repeat(10_000)}`;
    expect(quotedPath(long).length).toBeLessThan(600);
    expect(quotedPath(long)).toMatch(/…"$/);
  });
});
