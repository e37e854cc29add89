import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PodNamespace } from '../harness/pod-namespace.js';
import { KERNEL_CASES } from './semantics-cases.js';
import { connect, flush, install, modelAnswer, readBack, wire, type KernelCase } from './semantics-harness.js';

/**
 * What each target, statement and match the parsers accept does to NAT, decided by the kernel:
 * each case's rules are installed with the real tools in a pod namespace, a real connection is
 * made, and who answered it says where the kernel sent it. The model, given the rules as the
 * tools print them back, must give the same answer, or `unknown` where the case says its effect
 * is not modelled. docs/rules.md lists the same cases.
 */
let pod: PodNamespace;
let listeners: ChildProcess[] = [];

beforeAll(async () => {
  pod = PodNamespace.create({ ipv4: true, ipv6: true, sink: 'reject' });
  listeners = await wire(pod);
});

afterAll(() => {
  for (const child of listeners) child.kill();
  pod.destroy();
});

function title(testCase: KernelCase, index: number): string {
  const family = testCase.family === 'ipv6' ? ' IPv6' : '';
  return `#${index + 1} ${testCase.audits} (${testCase.backend}, ${testCase.direction}${family}): kernel ${testCase.kernel}, model ${testCase.model}`;
}

describe('the kernel decides what each rule does to NAT; the model agrees or says unknown', () => {
  KERNEL_CASES.forEach((testCase, index) => {
    it(title(testCase, index), () => {
      flush(pod);
      install(pod, testCase);
      const kernel = connect(pod, testCase);
      const model = modelAnswer(pod, readBack(pod, testCase), testCase);
      expect({ kernel, model }, testCase.rules).toEqual({
        kernel: testCase.kernel,
        model: testCase.model === 'exact' ? testCase.kernel : 'unknown',
      });
    });
  });
});

describe('docs/rules.md lists exactly what the kernel cases audit', () => {
  it('every audited target, statement and match has a row, and every row a case', () => {
    const docs = readFileSync(path.resolve(import.meta.dirname, '../../docs/rules.md'), 'utf8');
    const start = docs.indexOf('## What each rule does to NAT');
    const section = docs.slice(start, docs.indexOf('\n## ', start + 1));
    const rows = [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1]);
    expect(new Set(rows)).toEqual(new Set(KERNEL_CASES.map((c) => c.audits)));
  });
});
