#!/usr/bin/env node
// `npm run bench` part: time from `docker start` of the Interlock init container to its exit in
// e2e case 1 (a pod meshed with Linkerd's rules), median of N, beside the same for a container
// that runs `true` from the same base. Needs root, a Docker engine and the image (npm run image).
//   node scripts/bench-image.mjs [runs=10]
import { build } from 'esbuild';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] ?? 10);
if (!Number.isInteger(runs) || runs < 1) {
  console.error('usage: bench-image.mjs [runs]');
  process.exit(64);
}
process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
process.env.TESTCONTAINERS_HOST_OVERRIDE ??= 'localhost';

// The pod harness is the e2e suite's TypeScript; compile it rather than keep a second copy.
// The output sits inside the repository so that bare imports resolve from its node_modules.
const outDir = path.join(root, '.bench');
await mkdir(outDir, { recursive: true });
const outfile = path.join(outDir, 'start-to-exit.mjs');
await build({
  entryPoints: [path.join(root, 'e2e/bench/start-to-exit.ts')],
  outfile,
  bundle: true,
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
});
const { benchStartToExit } = await import(pathToFileURL(outfile).href);

const result = await benchStartToExit(runs);

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const ms = (value) => `${value.toFixed(0)} ms`;
const line = (label, samples) => {
  const times = samples.map((s) => s.startToExitMs);
  return `${label.padEnd(46)} median ${ms(median(times)).padStart(7)}  (min ${ms(Math.min(...times))}, max ${ms(Math.max(...times))})`;
};

const failed = result.interlock.filter((s) => s.exitCode !== 0);
if (failed.length > 0 || result.baseline.some((s) => s.exitCode !== 0)) {
  console.error(
    `bench-image: runs did not exit 0 (interlock exit codes: ${result.interlock.map((s) => s.exitCode).join(',')}); figures would be meaningless`,
  );
  process.exit(1);
}
const interlockMedian = median(result.interlock.map((s) => s.startToExitMs));
const baselineMedian = median(result.baseline.map((s) => s.startToExitMs));
const validatorTimes = result.interlock.map((s) => s.validatorMs).filter((v) => typeof v === 'number');

console.log(`docker start -> exit, case 1 (Linkerd rules), ${runs} runs each, ${result.image} on ${result.baseImage}`);
console.log(line('interlock validate (uid 65534, no caps, ro)', result.interlock));
console.log(line('baseline: `true` from the same base', result.baseline));
if (validatorTimes.length === result.interlock.length) {
  console.log(
    `${'  of which the validator reports (durationMs)'.padEnd(46)} median ${ms(median(validatorTimes)).padStart(7)}`,
  );
}
console.log(
  `ratio interlock / baseline: ${(interlockMedian / baselineMedian).toFixed(2)}x (+${ms(interlockMedian - baselineMedian)})`,
);
