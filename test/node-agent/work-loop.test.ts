import { describe, expect, it } from 'vitest';
import { WorkLoop } from '../../src/node-agent/work-loop.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

function loopWith(capacity: number) {
  const warnings: unknown[] = [];
  const depths: number[] = [];
  const loop = new WorkLoop(capacity, {
    metrics: { queueDepth: (depth) => depths.push(depth) },
    log: { warn: (fields) => warnings.push(fields) },
  });
  return { loop, warnings, depths };
}

describe('WorkLoop', () => {
  it('processes keys one at a time in order, a key offered twice while waiting once', async () => {
    const { loop } = loopWith(10);
    const seen: string[] = [];
    let active = 0;
    let most = 0;
    loop.offer('a');
    loop.offer('b');
    loop.offer('a');
    const running = loop.run(
      async (key) => {
        most = Math.max(most, ++active);
        await tick();
        seen.push(key);
        active--;
      },
      () => undefined,
    );
    await tick();
    await tick();
    await tick();
    expect(seen).toEqual(['a', 'b']);
    expect(most).toBe(1);
    loop.stop();
    await running;
  });

  it('a full queue refuses a key with a warning, and the worker rescans once it runs dry', async () => {
    const { loop, warnings } = loopWith(1);
    const seen: string[] = [];
    let rescans = 0;
    loop.offer('a');
    loop.offer('b');
    expect(warnings).toEqual([{ pod: 'b', capacity: 1 }]);
    const running = loop.run(
      async (key) => {
        seen.push(key);
      },
      () => {
        rescans++;
        loop.offer('b');
      },
    );
    await tick();
    expect(seen).toEqual(['a', 'b']);
    expect(rescans).toBe(1);
    loop.stop();
    await running;
  });

  it('a waiting worker wakes for a new key, and stop ends it; a key offered after stop is ignored', async () => {
    const { loop, depths } = loopWith(4);
    const seen: string[] = [];
    const running = loop.run(
      async (key) => {
        seen.push(key);
      },
      () => undefined,
    );
    await tick();
    loop.offer('a');
    await tick();
    expect(seen).toEqual(['a']);
    loop.stop();
    await running;
    expect(loop.stopping).toBe(true);
    const before = depths.length;
    loop.offer('b');
    expect(depths.length).toBe(before);
  });
});
