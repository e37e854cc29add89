// Builds the start-up snapshot Interlock ships: one V8 heap with the init container's path of the
// CLI (validate, its drop-in argv, version) already loaded and compiled, so
// `node --snapshot-blob interlock.blob validate ...` skips module resolution, parsing and
// evaluation (most of a short-lived init container's start-up).
//
//   node scripts/build-snapshot.mjs [out dir]   (default dist/snapshot)
//
// Out: interlock.blob, interlock.commands.cjs (every other command, loaded from beside the blob on
// first use), netlink.node (the addon, which no snapshot can hold), and the bundle the blob was
// built from. The blob is only valid for the node binary that built it.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import {
  CLI_BUNDLE_OPTIONS,
  noPinoDestinations,
  noPinoTransport,
  slimNetlinkLinkAttrs,
  stampBuildInfo,
} from './cli-bundle.mjs';

const root = path.resolve(import.meta.dirname, '..');
const out = path.resolve(process.argv[2] ?? path.join(root, 'dist/snapshot'));
const require = createRequire(path.join(root, 'package.json'));
const netlinkRoot = path.dirname(require.resolve('netlink/package.json'));
const addon = path.join(netlinkRoot, 'prebuilds', `${process.platform}-${process.arch}`, 'node.napi.node');

// V8 flags the blob is built with and must be started with (V8 refuses a snapshot whose flags
// differ): a heap cap, so one analysis of the largest input the size caps admit stays under
// 256 MiB of RSS instead of letting the old space grow to twice the live rules model.
const runtimeFlags = JSON.parse(readFileSync(path.join(root, 'scripts/node-runtime-flags.json'), 'utf8'));

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

// netlink opens its addon when its module loads; in the snapshot the addon is opened on first use
// instead, from netlink.node beside the blob (see src/snapshot/entry.ts).
const lazyNetlinkAddon = {
  name: 'lazy-netlink-addon',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /netlink[\\/]dist[\\/]raw\.js$/ }, async (args) => {
      const { readFile } = await import('node:fs/promises');
      const source = await readFile(args.path, 'utf8');
      const eager = "const binding = require('node-gyp-build')(__dirname + '/..');";
      if (!source.includes(eager))
        throw new Error(`netlink changed: ${args.path} no longer loads its addon as expected`);
      const lazy =
        'const binding = new Proxy({}, { get: (_target, key) => globalThis.__interlockNetlinkAddon()[key] });';
      return { contents: source.replace(eager, lazy), loader: 'js' };
    });
  },
};

/**
 * V8 holds a script's source in the heap for as long as its functions live, one byte a character
 * only when every character is Latin-1; esbuild leaves non-ASCII characters in regular
 * expressions as they are (Go's "μs", U+03BC). Each becomes its \u escape, which means the same in a string,
 * a regular expression, a template or an identifier; only one after a backslash would not, and
 * that fails the build.
 */
function asciiOnly(source) {
  // One UTF-16 unit at a time: a character outside the BMP becomes its two surrogate escapes.
  return source.replace(/[^\t\n\r\x20-\x7e]/g, (unit, offset) => {
    if (source[offset - 1] === '\\') throw new Error(`snapshot: an escaped non-ASCII character at ${offset}`);
    return `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/**
 * Modules the CLI imports on demand that stay out of the blob: every command but validate (and
 * what validate needs only with NET_ADMIN or on a failure it reports to the API server). Each
 * process the blob starts deserialises all of it, so the init container's path is all it holds;
 * these load from interlock.commands.cjs beside the blob when used (src/snapshot/entry.ts), a
 * few milliseconds on commands that run for minutes or for an operator.
 */
const onDemand = [
  'src/cli/command-table.ts',
  'src/cli/commands/node/run.ts',
  'src/cli/commands/webhook/run.ts',
  'src/cli/commands/explain/run.ts',
  'src/cli/commands/cni-check/run.ts',
  'src/cli/commands/inject/run.ts',
  'src/cli/commands/manifest/run.ts',
  'src/cli/commands/check/run.ts',
  'src/cli/commands/completion/run.ts',
  'src/cli/help-command.ts',
  'src/cli/commands/validate/switch-refusal.ts',
  'src/rules-check/decide.ts',
  'src/rules/read/read-live.ts',
  'src/kube/report-failure-event.ts',
];

// In the blob, each on-demand module is a stub that asks the entry for it (esbuild keeps a module
// reached only by import() unevaluated until that import() runs).
const onDemandStubs = {
  name: 'on-demand-stubs',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (args.kind !== 'dynamic-import') return undefined;
      const target = path.relative(root, path.resolve(args.resolveDir, args.path)).replace(/\.js$/, '.ts');
      return onDemand.includes(target) ? { path: target, namespace: 'on-demand' } : undefined;
    });
    pluginBuild.onLoad({ filter: /.*/, namespace: 'on-demand' }, (args) => ({
      contents: `module.exports = globalThis.__interlockOnDemand(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

// The second bundle: one lazily evaluated module per on-demand path, under that path.
const commandsEntry = [
  'exports.load = (name) => {',
  '  switch (name) {',
  ...onDemand.map((file) => `    case ${JSON.stringify(file)}: return require(${JSON.stringify(`./${file}`)});`),
  '  }',
  '  throw new Error(`interlock: ${name} is not in interlock.commands.cjs`);',
  '};',
].join('\n');

const bundle = path.join(out, 'interlock.snapshot.cjs');
const commands = path.join(out, 'interlock.commands.cjs');
await build({
  ...CLI_BUNDLE_OPTIONS,
  stdin: { contents: commandsEntry, resolveDir: root, sourcefile: 'interlock-commands.cjs', loader: 'js' },
  outfile: commands,
  plugins: [
    lazyNetlinkAddon,
    stampBuildInfo(root),
    noPinoTransport('interlock snapshot'),
    noPinoDestinations('interlock snapshot'),
    slimNetlinkLinkAttrs(),
  ],
});
await build({
  ...CLI_BUNDLE_OPTIONS,
  entryPoints: [path.join(root, 'src/snapshot/entry.ts')],
  outfile: bundle,
  plugins: [
    onDemandStubs,
    lazyNetlinkAddon,
    stampBuildInfo(root),
    noPinoTransport('interlock snapshot'),
    noPinoDestinations('interlock snapshot'),
    slimNetlinkLinkAttrs(),
  ],
  // Built-ins node:net loads on the first listen() (the host lookup, and the cluster check every
  // listen makes): loaded here, they are in the blob instead of compiled while the probe waits.
  // esbuild drops a bare `import 'node:dns'` as free of side effects, so they are required by hand.
  banner: { js: 'require("node:dns"); require("node:cluster");' },
});
// The node agent's rules analysis, run in a worker thread from beside interlock.commands.cjs.
await build({
  ...CLI_BUNDLE_OPTIONS,
  entryPoints: [path.join(root, 'src/node-agent/recheck/rules-worker.ts')],
  outfile: path.join(out, 'rules-worker.cjs'),
});
writeFileSync(bundle, asciiOnly(readFileSync(bundle, 'utf8')));
writeFileSync(commands, asciiOnly(readFileSync(commands, 'utf8')));
copyFileSync(addon, path.join(out, 'netlink.node'));
writeFileSync(path.join(out, 'node-flags'), `${runtimeFlags.join(' ')}\n`);
// The entry rehearses the validate pass path while the blob is built (src/snapshot/rehearsal.ts).
const built = spawnSync(
  process.execPath,
  [...runtimeFlags, '--snapshot-blob', path.join(out, 'interlock.blob'), '--build-snapshot', bundle],
  {
    stdio: ['ignore', 'inherit', 'pipe'],
    encoding: 'utf8',
  },
);
if (built.status !== 0) {
  // Node warns that some built-ins are "not yet fully verified" in snapshots; the namespace and
  // container tests run the snapshot for real, so those lines are noise, and only they are dropped.
  const noise = /not yet fully verified|may still work in some cases|Node\.js issue tracker|--trace-warnings/;
  console.error(
    built.stderr
      .split('\n')
      .filter((line) => !noise.test(line))
      .join('\n'),
  );
  console.error(`snapshot: building the blob failed (exit ${built.status ?? built.signal})`);
  process.exit(1);
}
console.log(`snapshot: ${path.relative(process.cwd(), out)}/interlock.blob built with node ${process.version}`);
