import { describe, expect, it } from 'vitest';
import { runManifest } from '../../../../src/cli/commands/manifest/run.js';
import { podinfoVolume } from '../../../../src/inject/podinfo.js';

const IMAGE = ['--image', 'registry.example.com/mesh-interlock:1'];

describe('manifest --output json tells what the YAML says in comments', () => {
  it('names the interlock-podinfo volume spec.volumes needs, as JSON the operator can paste', async () => {
    const run = await runManifest(['--mesh', 'linkerd', '--output', 'json', ...IMAGE], {});
    expect(run.exitCode, run.stderr).toBe(0);
    const container = JSON.parse(run.stdout) as { volumeMounts: Array<{ name: string }> };
    const mounted = container.volumeMounts.map((mount) => mount.name);
    expect(mounted).toContain('interlock-podinfo');
    expect(run.stderr).toMatch(/add to spec\.volumes/);
    const volume = /^\s+(\{"name":"interlock-podinfo".*\})$/m.exec(run.stderr)?.[1];
    expect(JSON.parse(volume ?? 'null')).toEqual(podinfoVolume());
  });

  it('carries the notes of --report-event and --rules-check too, and stdout stays one JSON value', async () => {
    const run = await runManifest(
      ['--mesh', 'istio', '--output', 'json', '--report-event', '--rules-check', ...IMAGE],
      {},
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(() => JSON.parse(run.stdout)).not.toThrow();
    expect(run.stderr).toMatch(/interlock manifest --rbac/);
    expect(run.stderr).toMatch(/pod-security\.kubernetes\.io\/enforce=privileged/);
  });

  it('YAML keeps them in comments, with nothing on stderr', async () => {
    const run = await runManifest(['--mesh', 'linkerd', ...IMAGE], {});
    expect(run.stdout).toMatch(/^# .*add to spec\.volumes/m);
    expect(run.stderr).toBe('');
  });
});
