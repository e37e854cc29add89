import { describe, expect, it } from 'vitest';
import { rehearseValidate } from '../../src/snapshot/rehearsal.js';

// The snapshot build runs this once and then serializes the heap: it must pass (a failed
// rehearsal fails the build) and leave nothing open, or the blob could not be taken.
describe('snapshot rehearsal', () => {
  it('proves its loopback probe and leaves no socket, server or timer behind', async () => {
    const before = process.getActiveResourcesInfo().filter((kind) => kind !== 'TTYWrap');
    await rehearseValidate();
    // A closed socket leaves the list once its close callback ran, a few turns of the loop later;
    // a timer or a socket still open stays there however long one waits.
    for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setImmediate(resolve));
    const after = process.getActiveResourcesInfo().filter((kind) => kind !== 'TTYWrap');
    // Nothing more of any kind than before: a timer of the test runner's own that was pending
    // before may fire meanwhile (it did, under load), but one the rehearsal left would add one.
    const count = (list: readonly string[]) =>
      list.reduce((counts, kind) => counts.set(kind, (counts.get(kind) ?? 0) + 1), new Map<string, number>());
    const left = [...count(after)].filter(([kind, n]) => n > (count(before).get(kind) ?? 0)).map(([kind]) => kind);
    expect(left).toEqual([]);
  });
});
