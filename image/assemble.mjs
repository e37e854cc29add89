// Assembles what the image runs, and nothing else, into <output dir>:
//   interlock.blob   the start-up snapshot (scripts/build-snapshot.mjs): every JS module of the
//                    CLI loaded and compiled into one V8 heap, valid only for the node binary
//                    that built it, which is why the Dockerfile builds it on the image's own base;
//   interlock.commands.cjs  every command but validate, loaded from beside the blob when used
//                    (the blob holds only the init container's path);
//   netlink.node     netlink's linux N-API prebuild, which no snapshot can hold;
//   rules-worker.cjs the node agent's rules analysis, run in a worker thread;
//   bin/interlock    the command: node started from the snapshot;
//   THIRD_PARTY_NOTICES.txt  licences of the packages compiled into the snapshot.
// Used by the Dockerfile's build stage; runnable on a host too:
//   node image/assemble.mjs <project dir> <output dir>
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { launcherScript } from './launcher.mjs';

const [projectArg = '.', outArg = 'build/image-app'] = process.argv.slice(2);
const project = path.resolve(projectArg);
const out = path.resolve(outArg);
const installDir = process.env.INTERLOCK_INSTALL_DIR ?? '/opt/interlock';

await rm(out, { recursive: true, force: true });
await mkdir(path.join(out, 'bin'), { recursive: true });

const work = await mkdtemp(path.join(tmpdir(), 'interlock-snapshot-'));
try {
  execFileSync(process.execPath, [path.join(project, 'scripts/build-snapshot.mjs'), work], {
    cwd: project,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await cp(path.join(work, 'interlock.blob'), path.join(out, 'interlock.blob'));
  await cp(path.join(work, 'interlock.commands.cjs'), path.join(out, 'interlock.commands.cjs'));
  await cp(path.join(work, 'netlink.node'), path.join(out, 'netlink.node'));
  await cp(path.join(work, 'rules-worker.cjs'), path.join(out, 'rules-worker.cjs'));
  await cp(path.join(work, 'node-flags'), path.join(out, 'node-flags'));

  // import() with a computed specifier is left alone by esbuild, and its target is then missing
  // from the snapshot: say so at build time, not in a pod.
  for (const file of ['interlock.snapshot.cjs', 'interlock.commands.cjs']) {
    const bundled = await readFile(path.join(work, file), 'utf8');
    for (const match of bundled.matchAll(/\bimport\(\s*([A-Za-z_$][\w$]*)\s*\)/g)) {
      console.warn(
        `assemble: warning: import(${match[1]}) in ${file} has a computed specifier; its target is not bundled`,
      );
    }
  }
} finally {
  await rm(work, { recursive: true, force: true });
}

// The snapshot finds netlink.node beside the blob through --snapshot-blob, so the path is absolute.
const launcher = path.join(out, 'bin', 'interlock');
// The blob starts only with the V8 flags it was built with (scripts/node-runtime-flags.json).
const nodeFlags = (await readFile(path.join(out, 'node-flags'), 'utf8')).trim();
await writeFile(launcher, launcherScript(nodeFlags, `${installDir}/interlock.blob`));
await chmod(launcher, 0o755);

// Licence texts of every package compiled into the snapshot: the image redistributes them, and
// most of these licences require the notice to travel with the code.
const { metafile } = await build({
  entryPoints: [path.join(project, 'src/snapshot/entry.ts')],
  bundle: true,
  write: false,
  metafile: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'error',
  absWorkingDir: project,
});
const packageDirs = new Set();
for (const input of Object.keys(metafile.inputs)) {
  const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (match) packageDirs.add(path.resolve(project, match[1]));
}
const sections = [];
for (const dir of [...packageDirs].sort()) {
  const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
  const licenceFile = (await readdir(dir)).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
  const text = licenceFile
    ? await readFile(path.join(dir, licenceFile), 'utf8')
    : `(no licence file; package.json says ${pkg.license ?? 'nothing'})`;
  sections.push(`${pkg.name}@${pkg.version} (${pkg.license ?? 'unknown'})\n\n${text.trim()}\n`);
}
await writeFile(path.join(out, 'THIRD_PARTY_NOTICES.txt'), sections.join(`\n${'-'.repeat(72)}\n\n`));

async function du(p) {
  const s = await stat(p);
  if (!s.isDirectory()) return s.size;
  let total = 0;
  for (const name of await readdir(p)) total += await du(path.join(p, name));
  return total;
}
const kib = async (p) => `${((await du(p)) / 1024).toFixed(0)} KiB`;
console.log(
  `assemble: snapshot ${await kib(path.join(out, 'interlock.blob'))}, ` +
    `other commands ${await kib(path.join(out, 'interlock.commands.cjs'))}, addon ${await kib(path.join(out, 'netlink.node'))}, ` +
    `${sections.length} third-party licences; total ${await kib(out)}`,
);
