import { describe, expect, it } from 'vitest';
import { queryPluginVersion, versionAnswerOf } from '../../src/cni/query-plugin-version.js';

describe("a plugin's answer to CNI_COMMAND=VERSION", () => {
  it('reads supportedVersions', () => {
    expect(versionAnswerOf('{"cniVersion":"1.0.0","supportedVersions":["0.3.1","1.0.0"]}', 0)).toEqual({
      ok: true,
      supportedVersions: ['0.3.1', '1.0.0'],
    });
  });

  it('an error result, a non-zero exit, non-JSON, or no list is no answer', () => {
    expect(versionAnswerOf('{"code":4,"msg":"unknown CNI_COMMAND: VERSION"}', 1)).toEqual({
      ok: false,
      error: 'exit 1: unknown CNI_COMMAND: VERSION',
    });
    expect(versionAnswerOf('', 0, 'segfault')).toMatchObject({
      ok: false,
      error: expect.stringContaining('stderr: segfault'),
    });
    expect(versionAnswerOf('{"cniVersion":"1.0.0"}', 0)).toMatchObject({ ok: false });
    expect(versionAnswerOf('{"supportedVersions":[1]}', 0)).toMatchObject({ ok: false });
  });

  it('asks a real plugin binary (the bridge from containernetworking-plugins, when installed)', async () => {
    const answer = await queryPluginVersion('/usr/lib/cni/bridge', ['/usr/lib/cni'], 5000);
    expect(answer).toMatchObject({ ok: true, supportedVersions: expect.arrayContaining(['0.3.1', '1.0.0']) });
  });

  it('a binary that cannot run', async () => {
    expect(await queryPluginVersion('/nonexistent/plugin', [], 1000)).toMatchObject({
      ok: false,
      error: expect.stringContaining('it does not exist; check the path'),
    });
  });
});
