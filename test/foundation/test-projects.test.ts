import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

function testFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => path.join(dir, file));
}

/**
 * What only root can do: pod namespaces, cgroups, other uids, other namespaces. Spelled in pieces
 * so that this file does not match itself. The unit project also runs without any capability
 * (scripts/test-unit.sh), which catches what this list misses.
 */
const ROOT_ONLY = [
  ['use', 'Pods('],
  ['new Pod', 'Namespace('],
  ['memory', 'Cgroup('],
  ['ip ', 'netns'],
  ['un', 'share'],
  ['set', 'priv'],
  // As a program name (quoted alone), not inside a message that quotes an nsenter command line.
  ["'ns", "enter'"],
].map((parts) => parts.join(''));

describe('each test says where it runs (vitest.config.ts)', () => {
  const unit = testFiles('test').filter((file) => !file.endsWith('.root.test.ts'));

  it('a unit test uses nothing that needs root: such a file is named *.root.test.ts', () => {
    const offenders = unit.flatMap((file) => {
      const text = readFileSync(path.join(root, file), 'utf8');
      return ROOT_ONLY.filter((word) => text.includes(word)).map((word) => `${file}: ${word}`);
    });
    expect(offenders).toEqual([]);
    expect(unit.length).toBeGreaterThan(100);
  });

  it('containers and the CRI runtime live in e2e/, never as *.root.test.ts', () => {
    expect(testFiles('e2e').filter((file) => file.endsWith('.root.test.ts'))).toEqual([]);
    expect(
      unit.filter((file) => /from '(?:testcontainers|dockerode)'/.test(readFileSync(path.join(root, file), 'utf8'))),
    ).toEqual([]);
  });
});
