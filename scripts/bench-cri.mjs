#!/usr/bin/env node
// `npm run bench` part: what Interlock's validator adds to a pod's start on the kubelet's path
// (containerd's CRI, real bridge + host-local CNI with the mesh stand-in, e2e/cri's harness):
// median StartContainer-to-exit of the validator against a no-op init container (`node -e 0`
// from the same image), and RunPodSandbox-to-app-started with the validator, the no-op, and no
// init container at all. Prints figures; asserts nothing. Needs root, containerd, Docker, the image.
//   node scripts/bench-cri.mjs [runs=9]
import { build } from 'esbuild';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] ?? 9);
if (!Number.isInteger(runs) || runs < 1) {
  console.error('usage: bench-cri.mjs [runs]');
  process.exit(64);
}
// Written beside the harness, whose modules find their proto, pause source and fixtures relative
// to themselves; removed once loaded.
const outfile = path.join(root, 'e2e/cri', `.bench-pod-start-${process.pid}.mjs`);
await build({
  entryPoints: [path.join(root, 'e2e/bench/cri-pod-start.ts')],
  outfile,
  bundle: true,
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'error',
});
const { benchPodStart } = await import(pathToFileURL(outfile).href).finally(() => rm(outfile, { force: true }));

const median = (values) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const samples = await benchPodStart(runs);
const ms = (value) => `${value.toFixed(0).padStart(5)} ms`;
const pick = (variant, key) => median(samples[variant].map((sample) => sample[key]));
console.log(
  `CRI pod start (containerd ${'1.6'} CRI, bridge + host-local + mesh stand-in): ${runs} interleaved pods of each kind`,
);
console.log(
  `  init container StartContainer -> exit:  validator ${ms(pick('validator', 'startToExitMs'))}   no-op ${ms(pick('noop', 'startToExitMs'))}   (runtime's own start->exit: ${ms(pick('validator', 'runtimeMs'))} vs ${ms(pick('noop', 'runtimeMs'))})`,
);
console.log(
  `  RunPodSandbox -> app started:  validator ${ms(pick('validator', 'podStartMs'))}   no-op init ${ms(pick('noop', 'podStartMs'))}   no init ${ms(pick('none', 'podStartMs'))}`,
);
console.log(
  `  added by the validator (p50): ${ms(pick('validator', 'startToExitMs') - pick('noop', 'startToExitMs'))} over a no-op init container, ${ms(pick('validator', 'podStartMs') - pick('none', 'podStartMs'))} over no init container; target <= 100 ms`,
);
