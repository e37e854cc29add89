import { describe, expect, it } from 'vitest';
import { runInject } from '../../src/cli/commands/inject/run.js';
import { runManifest } from '../../src/cli/commands/manifest/run.js';
import { parseImageReference } from '../../src/config/flag-parsers.js';

const HEX64 = 'a'.repeat(64);

// Accepted and refused as github.com/distribution/reference v0.6.0 (regexp.go, normalize.go) parses them.
const VALID = [
  'mesh-interlock:dev',
  'busybox',
  'library/busybox:1.36',
  'ghcr.io/example/mesh-interlock:0.1.0',
  'localhost:5000/interlock:latest',
  'localhost/interlock',
  'Registry.Example.com:443/team/interlock:V1',
  '[fd00::1]:5000/interlock:1',
  `registry.example.com/interlock@sha256:${HEX64}`,
  `registry.example.com/interlock:1.0@sha256:${HEX64}`,
  'a__b/c--d/e.f:_tag',
  // normalize.go: an upper-case first component is a registry host.
  'UPPER/case:tag',
];
const INVALID = [
  '',
  'UPPER/Case:tag',
  'Interlock',
  HEX64,
  '@sha256:abc',
  'interlock@sha256:abc',
  'interlock:',
  'interlock:-tag',
  `interlock:${'t'.repeat(129)}`,
  'registry.example.com/',
  '/interlock',
  'inter..lock',
  'inter___lock',
  'interlock:1 ',
  ' interlock',
  'https://registry.example.com/interlock',
  `${'a'.repeat(256)}`,
];

describe('--image is a reference a registry client accepts', () => {
  for (const text of VALID)
    it(`accepts ${JSON.stringify(text)}`, () => expect(parseImageReference(text)).toEqual({ ok: true, value: text }));
  for (const text of INVALID)
    it(`refuses ${JSON.stringify(text.slice(0, 40))}`, () => expect(parseImageReference(text).ok).toBe(false));

  it('manifest and inject refuse an invalid reference with exit 64', async () => {
    for (const image of ['UPPER/Case:tag', '@sha256:abc']) {
      expect((await runManifest(['--mesh', 'istio', '--image', image], {})).exitCode).toBe(64);
      expect((await runInject(['--mesh', 'istio', '--image', image], {}, () => Buffer.from(''))).exitCode).toBe(64);
    }
  });
});

describe('the unpublished default image is never used silently', () => {
  const pod = 'apiVersion: v1\nkind: Pod\nmetadata: { name: p }\nspec:\n  containers: [{ name: app, image: app }]\n';

  it('manifest warns on stderr, naming the image and what to pass, where a container uses it', async () => {
    for (const argv of [['--mesh', 'linkerd'], ['--node-agent', '--mesh', 'linkerd'], ['--webhook']]) {
      const run = await runManifest(argv, {});
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stderr, argv.join(' ')).toMatch(
        /warning: no --image given.*mesh-interlock:dev.*ImagePullBackOff.*--image/,
      );
    }
    expect((await runManifest(['--rbac'], {})).stderr).toBe('');
    expect((await runManifest(['--mesh', 'linkerd', '--image', 'r.example/i:1'], {})).stderr).toBe('');
  });

  it('inject warns when it injected the default image, not when given one', async () => {
    const bare = await runInject(['--mesh', 'istio'], {}, () => Buffer.from(pod));
    expect(bare.exitCode, bare.stderr).toBe(0);
    expect(bare.stderr).toMatch(/^interlock inject: warning: no --image given/m);
    const given = await runInject(['--mesh', 'istio', '--image', 'r.example/i:1'], {}, () => Buffer.from(pod));
    // The pod has no proxy yet: inject warns of that (uninjected-pod-warning.test.ts), not of the image.
    expect(given.stderr).not.toMatch(/--image/);
    expect(given.stdout).toContain('image: r.example/i:1');
  });
});
