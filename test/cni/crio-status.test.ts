import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CRIO_STATUS_LACKS, parseCrioStatus } from '../../src/cni/crio-status.js';
import { parseRuntimeStatus } from '../../src/cni/runtime-status.js';
import { prng } from '../harness/prng.js';

// CRI-O's verbose Status as its source builds it (server/runtime_status.go, createRuntimeInfo),
// v1.33.13 and v1.32.0: derived from source, since no CRI-O runs here (the fixtures' README).
const info = (name: string): Map<string, string> => {
  const file = fileURLToPath(new URL(`../fixtures/cni/cri-status/${name}.json`, import.meta.url));
  return new Map(Object.entries((JSON.parse(readFileSync(file, 'utf8')) as { info: Record<string, string> }).info));
};
const containerd = (): Map<string, string> => info('conflist-loaded');

describe("CRI-O's verbose Status, parsed", () => {
  it('v1.33: the pause image and the [crio.runtime] table, and nothing of the network', () => {
    expect(parseCrioStatus(info('crio-1.33.13'))).toEqual({
      ok: true,
      value: { sandboxImage: 'registry.k8s.io/pause:3.10', defaultRuntime: 'crun' },
    });
    const config = JSON.parse(info('crio-1.33.13').get('config') ?? '') as { crio: Record<string, unknown> };
    for (const key of ['NetworkDir', 'PluginDirs', 'PluginDir', 'CNIDefaultNetwork'])
      expect(Object.keys(config.crio)).not.toContain(key);
    expect(CRIO_STATUS_LACKS).toContain('network_dir, its plugin_dirs nor the networks it loaded');
  });

  it('v1.32: the pause image alone', () => {
    expect(parseCrioStatus(info('crio-1.32.0'))).toEqual({
      ok: true,
      value: { sandboxImage: 'registry.k8s.io/pause:3.10' },
    });
  });

  it('the runtime is told by the shape: cniconfig is containerd (which has a config of its own too), config alone CRI-O', () => {
    expect(parseRuntimeStatus(info('crio-1.33.13'))).toMatchObject({ ok: true, value: { runtime: 'crio' } });
    const withDaemonConfig = new Map([...containerd(), ['config', '{"containerd":{}}']]);
    expect(parseRuntimeStatus(withDaemonConfig)).toMatchObject({ ok: true, value: { runtime: 'containerd' } });
    expect(parseRuntimeStatus(new Map([['golang', 'go1.22']]))).toMatchObject({
      ok: false,
      error: { reason: 'RuntimeAnswerInvalid', message: expect.stringContaining('neither') },
    });
  });

  it('refuses what is not its shape, naming the part at fault', () => {
    const refused = (config: string | undefined) =>
      parseCrioStatus(config === undefined ? new Map() : new Map([['config', config]]));
    const cases: Array<[string | undefined, string]> = [
      [undefined, 'no "config" entry'],
      ['{"sandboxImage":', '"config" is not JSON'],
      ['[]', '"config" is not an object'],
      ['{"sandboxImage":3}', '"config".sandboxImage is not a string'],
      ['{"sandboxImage":"p","crio":[]}', '"config".crio is not an object'],
      ['{"sandboxImage":"p","crio":{}}', '"config".crio.DefaultRuntime is not a string'],
    ];
    for (const [config, message] of cases)
      expect(refused(config)).toEqual({
        ok: false,
        error: { reason: 'RuntimeAnswerInvalid', message: `CRI-O's verbose Status: ${message}` },
      });
  });

  it('fuzz: cut, flipped and retyped answers are refused or parsed, never thrown', () => {
    const random = prng(4433);
    const texts = ['crio-1.33.13', 'crio-1.32.0'].map((name) => info(name).get('config') ?? '');
    for (let round = 0; round < 3000; round++) {
      const base = texts[round % texts.length] as string;
      const at = Math.floor(random() * base.length);
      const mutated = [
        base.slice(0, at),
        base.slice(0, at) + String.fromCharCode(Math.floor(random() * 128)) + base.slice(at + 1),
        base.replace(/"[A-Za-z]+":/, `"${String.fromCharCode(65 + Math.floor(random() * 26))}":`),
        base.replace(/"crun"|"registry[^"]*"/, ['null', '1', '{}', '[]'][Math.floor(random() * 4)] as string),
      ][round % 4] as string;
      const answer = parseRuntimeStatus(new Map([['config', mutated]]));
      if (answer.ok) {
        expect(answer.value.runtime).toBe('crio');
        if (answer.value.runtime === 'crio') expect(typeof answer.value.crio.sandboxImage).toBe('string');
      } else expect(answer.error.reason).toBe('RuntimeAnswerInvalid');
    }
  });
});
