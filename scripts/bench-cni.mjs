// `interlock cni-check` on a directory of 50 configuration files, on the built dist/: the
// directory read + model + audit (target: at most 100 ms), the VERSION queries (concurrent), the
// whole in-process audit, and the CLI's wall time against `node -e 0`. Figures are printed,
// never asserted. Needs Debian's containernetworking-plugins (scripts/ensure-containerd.sh).
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { auditCni } from '../dist/cni/audit-cni.js';
import { queryPluginVersion } from '../dist/cni/query-plugin-version.js';
import { readCniDir } from '../dist/cni/read-cni-dir.js';
import { runCniAudit } from '../dist/cni/run-cni-audit.js';

const FILES = 50;
const root = mkdtempSync(join(tmpdir(), 'bench-cni-'));
const confDir = join(root, 'net.d');
const binDir = join(root, 'bin');
mkdirSync(confDir);
mkdirSync(binDir);
for (const plugin of ['bridge', 'host-local', 'portmap', 'loopback'])
  copyFileSync(`/usr/lib/cni/${plugin}`, join(binDir, plugin));
copyFileSync(new URL('../test/fixtures/cni/mesh-cni-standin.mjs', import.meta.url), join(binDir, 'linkerd-cni'));
chmodSync(join(binDir, 'linkerd-cni'), 0o755);

// The winner first, then 49 others of every shape: lists, single plugins, leftovers naming
// missing plugins, invalid JSON, uncounted names. (Partial files are left out: they are
// re-read on purpose, which would measure the retry delay, not the audit.)
const bridge = (i) => ({
  type: 'bridge',
  bridge: `br${i}`,
  isGateway: true,
  ipam: { type: 'host-local', ranges: [[{ subnet: `10.${i}.0.0/24` }]] },
});
writeFileSync(
  join(confDir, '00-primary.conflist'),
  JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'pods',
      plugins: [bridge(0), { type: 'portmap', capabilities: { portMappings: true } }, { type: 'linkerd-cni' }],
    },
    null,
    2,
  ),
);
for (let i = 1; i < FILES; i++) {
  const name = `${String(10 + i).padStart(2, '0')}-net${i}`;
  const kind = i % 5;
  if (kind === 0)
    writeFileSync(
      join(confDir, `${name}.conflist`),
      JSON.stringify(
        { cniVersion: '0.4.0', name: `n${i}`, plugins: [bridge(i), { type: 'calico' }, { type: 'bandwidth' }] },
        null,
        2,
      ),
    );
  else if (kind === 1)
    writeFileSync(join(confDir, `${name}.conf`), JSON.stringify({ cniVersion: '0.3.1', name: `n${i}`, ...bridge(i) }));
  else if (kind === 2)
    writeFileSync(join(confDir, `${name}.json`), '{"cniVersion": "1.0.0", "name": "broken", "plugins": [,]}');
  else if (kind === 3)
    writeFileSync(
      join(confDir, `${name}.conflist`),
      JSON.stringify({ cniVersion: '1.0.0', name: `n${i}`, plugins: [bridge(i), { type: 'portmap' }] }),
    );
  else writeFileSync(join(confDir, `${name}.conf.bak`), 'old');
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const options = {
  confDir,
  binDirs: [binDir],
  runtime: 'containerd',
  meshPlugin: 'linkerd-cni',
  versionTimeoutMs: 5000,
};

// 1. The part that must stay under 100 ms: read the 50 files, model containerd, audit (with the
// binaries' answers already known).
const full = await runCniAudit(options);
if (!full.ok || !full.value.healthy) throw new Error(`the bench directory must be healthy: ${JSON.stringify(full)}`);
const inventory = new Map(
  ['bridge', 'portmap', 'linkerd-cni', 'host-local', 'loopback'].map((type) => [
    type,
    { type, path: join(binDir, type), executable: true, supportedVersions: ['0.3.1', '0.4.0', '1.0.0'] },
  ]),
);
const core = [];
for (let run = 0; run < 30; run++) {
  const start = performance.now();
  const listing = await readCniDir(confDir);
  if (!listing.ok) throw new Error(listing.error.message);
  auditCni({ listing: listing.value, runtime: 'containerd', meshPlugin: 'linkerd-cni', binDirs: [binDir], inventory });
  core.push(performance.now() - start);
}

// 2. The VERSION queries of the winning chain, concurrently.
const queries = [];
for (let run = 0; run < 10; run++) {
  const start = performance.now();
  await Promise.all(
    ['bridge', 'portmap', 'linkerd-cni'].map((type) => queryPluginVersion(join(binDir, type), [binDir], 5000)),
  );
  queries.push(performance.now() - start);
}
const bridgeOnly = [];
for (let run = 0; run < 10; run++) {
  const start = performance.now();
  await queryPluginVersion(join(binDir, 'bridge'), [binDir], 5000);
  bridgeOnly.push(performance.now() - start);
}

// 3. The whole in-process audit (read, stat, VERSION, model, audit).
const whole = [];
for (let run = 0; run < 10; run++) {
  const start = performance.now();
  await runCniAudit(options);
  whole.push(performance.now() - start);
}

// 4. The CLI, wall time, interleaved with its baseline.
const cli = [];
const baseline = [];
const cliPath = new URL('../dist/cli/main.js', import.meta.url).pathname;
for (let run = 0; run < 10; run++) {
  let start = performance.now();
  const result = spawnSync('node', [
    cliPath,
    'cni-check',
    '--mesh',
    'linkerd',
    '--cni-conf-dir',
    confDir,
    '--cni-bin-dir',
    binDir,
  ]);
  cli.push(performance.now() - start);
  if (result.status !== 0) throw new Error(`cni-check exit ${result.status}: ${result.stdout}${result.stderr}`);
  start = performance.now();
  execFileSync('node', ['-e', '0']);
  baseline.push(performance.now() - start);
}
rmSync(root, { recursive: true, force: true });

const ms = (value) => `${value.toFixed(1)} ms`;
console.log(`cni-check, ${FILES} files (containerd rules; medians):`);
console.log(
  `  read + model + audit (target <= 100 ms): ${ms(median(core))} (min ${ms(Math.min(...core))}, max ${ms(Math.max(...core))})`,
);
console.log(
  `  VERSION queries, bridge + portmap + linkerd-cni stand-in (node) at once: ${ms(median(queries))}; the Go bridge plugin alone: ${ms(median(bridgeOnly))}`,
);
console.log(`  whole audit in-process (read, stat, VERSION, audit): ${ms(median(whole))}`);
console.log(`  CLI wall time: ${ms(median(cli))} against ${ms(median(baseline))} for node -e 0`);
