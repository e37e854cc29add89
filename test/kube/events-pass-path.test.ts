import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

/** Every module `entry` loads before it runs: static imports only, followed through the tree. */
function staticGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^'"]*?from\s+'([^']+)'/gm)) {
      const target = match[1] ?? '';
      if (target.startsWith('.')) visit(resolve(dirname(file), target.replace(/\.js$/, '.ts')));
      else seen.add(`package:${target}`);
    }
  };
  visit(entry);
  return seen;
}

describe('the pass path of validate loads no Kubernetes client code', () => {
  it('nothing the CLI loads statically reaches src/kube (but the flag declaration), src/inject, src/compat or yaml', () => {
    // The CLI loads a command's runner when it runs it: the pass path is the entry plus validate's.
    const graph = [
      ...staticGraph(join(SRC, 'cli/main.ts')),
      ...staticGraph(join(SRC, 'cli/commands/validate/run.ts')),
    ].map((file) => file.replace(`${SRC}/`, ''));
    expect(graph).toContain('validate/run-validate.ts');
    const offending = graph.filter((file) => /^(kube|inject|compat)\//.test(file) || file === 'package:yaml');
    expect(offending).toEqual([]);
  });

  it('the graph walker sees through to the kube client when it is imported statically (so the check above can fail)', () => {
    const graph = [...staticGraph(join(SRC, 'kube/report-failure-event.ts'))].map((file) =>
      file.replace(`${SRC}/`, ''),
    );
    expect(graph).toEqual(expect.arrayContaining(['kube/request.ts', 'kube/kubeconfig.ts', 'package:yaml']));
  });
});
