// Builds the npm bin (package.json `bin`): dist/bin/interlock.cjs (scripts/bin-launcher.cjs), the
// CLI bundled into one CommonJS file beside it, and that bundle's V8 code cache.
//
//   node scripts/build-bin.mjs   (run by `npm run build`)
//
// Why: a validator started from tsc's plain modules (dist/cli/main.js, some 200 ES modules) spent
// about 3 times the CPU of the start-up snapshot, most of it in Node's module loaders resolving,
// reading and compiling files one by one; in a node-boot storm on 2 cores shared with busy
// processes, that CPU is what decides whether 110 validators meet their deadline. One bundle
// skips the resolution and the per-module work; the code cache skips compiling what start-up runs.
//
// What validate loads on demand (`await import(...)`: the rules engine, the other commands) stays
// lazy: esbuild turns each into a require() of a module evaluated on first use.
// The netlink addon stays where npm installed it: netlink's raw.js, which opens it through
// node-gyp-build relative to its own directory, is left out of the bundle and required from
// node_modules (the checkout's, or the installing project's).
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  CLI_BUNDLE_OPTIONS,
  noPinoDestinations,
  noPinoTransport,
  slimNetlinkLinkAttrs,
  stampBuildInfo,
} from './cli-bundle.mjs';

const root = path.resolve(import.meta.dirname, '..');
const out = path.join(root, 'dist/bin');
const launcher = path.join(out, 'interlock.cjs');
const bundle = path.join(out, 'interlock-bundle.cjs');
const codeCache = path.join(out, 'interlock-bundle.code-cache');

// netlink's raw.js finds its addon from its own __dirname, which a bundle does not have.
const externalNetlinkRaw = {
  name: 'external-netlink-raw',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^\.\/raw$/ }, (args) =>
      /[\\/]node_modules[\\/]netlink[\\/]dist$/.test(args.resolveDir)
        ? { path: 'netlink/dist/raw.js', external: true }
        : undefined,
    );
  },
};

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [path.join(root, 'src/cli/main.ts')],
  outfile: bundle,
  ...CLI_BUNDLE_OPTIONS,
  plugins: [
    stampBuildInfo(root),
    externalNetlinkRaw,
    noPinoTransport('interlock bin'),
    noPinoDestinations('interlock bin'),
    slimNetlinkLinkAttrs(),
  ],
});
// The launcher wraps the bundle in a function: main.ts's shebang line would not parse there.
// The node agent's rules analysis runs in a worker thread, from this file beside the bundle
// (src/node-agent/recheck/worker-analysis.ts finds it through __dirname).
await build({
  entryPoints: [path.join(root, 'src/node-agent/recheck/rules-worker.ts')],
  outfile: path.join(out, 'rules-worker.cjs'),
  ...CLI_BUNDLE_OPTIONS,
});
const source = readFileSync(bundle, 'utf8').replace(/^#!.*\n/, '');
// A vm.Script has no dynamic import() to give the bundle: each must have become a require().
if (/\bimport\(/.test(source)) throw new Error('bin: the bundle kept a dynamic import()');
writeFileSync(bundle, source);
copyFileSync(path.join(root, 'scripts/bin-launcher.cjs'), launcher);
chmodSync(launcher, 0o755);
// The cache is made by running `interlock version` from the bundle, compiled as the launcher
// compiles it, under the V8 flags the bin's shebang gives, declared in
// scripts/node-runtime-flags.json (V8 takes a cache only under the flags that made it; a test keeps
// the shebang equal to that file). Nothing else runs: no probe, no socket, nothing read from the
// build machine.
const heapCap = JSON.parse(readFileSync(path.join(root, 'scripts/node-runtime-flags.json'), 'utf8'));
const made = spawnSync(
  process.execPath,
  [
    ...heapCap,
    '-e',
    `const { writeFileSync } = require('node:fs');
     const { compileBundle, runBundle } = require(${JSON.stringify(launcher)});
     const script = compileBundle();
     process.on('exit', () => writeFileSync(${JSON.stringify(codeCache)}, script.createCachedData()));
     process.argv.splice(1, process.argv.length, ${JSON.stringify(launcher)}, 'version');
     runBundle(script);`,
  ],
  { stdio: ['ignore', 'ignore', 'inherit'] },
);
if (made.status !== 0) throw new Error(`bin: making the code cache failed (exit ${made.status ?? made.signal})`);
console.log(`bin: ${path.relative(process.cwd(), launcher)} and its bundle built with node ${process.version}`);
