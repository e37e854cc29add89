#!/usr/bin/env node
// `npm run bench` part (issue #34): `interlock node --recheck-interval` sweeping 110 real
// sandboxes (containerd's CRI, bridge + host-local + the Linkerd CNI stand-in writing each pod's
// rules): wall time of a sweep, the agent's CPU per pod (its own, less its idle rate; the
// nsenter/iptables children apart), peak RSS against the idle agent of the same run. Prints
// figures; asserts nothing. Needs root, containerd and the image (e2e/cri's harness).
//   node scripts/bench-recheck.mjs [pods=110] [sweeps=3]
import { build } from 'esbuild';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pods = Number(process.argv[2] ?? 110);
const sweeps = Number(process.argv[3] ?? 3);
const outfile = path.join(root, 'e2e/cri', `.bench-recheck-${process.pid}.mjs`);
await build({
  entryPoints: [path.join(root, 'e2e/bench/recheck-sweep.ts')],
  outfile,
  bundle: true,
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'error',
});
const { benchRecheck } = await import(pathToFileURL(outfile).href).finally(() => rm(outfile, { force: true }));
const result = await benchRecheck(pods, sweeps);
const list = (values, digits) => values.map((value) => value.toFixed(digits)).join(', ');
const max = (values) => Math.max(...values);
console.log(`re-check sweep of ${result.pods} pods (${result.captured} captured in the last sweep), ${sweeps} sweeps:`);
if (result.captured !== result.pods) console.log(`  not every pod was checked: ${result.unknown}`);
console.log(
  `  wall per sweep: ${list(result.sweepSeconds, 2)} s   (target <= 5 s: ${max(result.sweepSeconds) <= 5 ? 'met' : 'NOT met'})`,
);
console.log(
  `  agent CPU per pod: ${list(result.sweepCpuMsPerPod, 1)} ms   (target <= 20 ms: ${max(result.sweepCpuMsPerPod) <= 20 ? 'met' : 'NOT met'}); idle agent ${result.idleCpuMsPerSecond.toFixed(1)} ms CPU/s; nsenter + iptables/nft children ${result.childCpuMsPerPod.toFixed(1)} ms per pod`,
);
console.log(
  `  peak RSS: ${result.peakRssMiB.toFixed(1)} MiB against ${result.idleRssMiB.toFixed(1)} MiB idle with the same pods   (target <= 128 MiB: ${result.peakRssMiB <= 128 ? 'met' : 'NOT met'})`,
);
