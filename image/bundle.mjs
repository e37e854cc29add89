// Produces what the image runs, and nothing else: one ESM bundle of the CLI plus the parts of
// `netlink` that load at run time (its compiled JS and the linux-x64 N-API prebuild, found by
// node-gyp-build). Used by the Dockerfile's build stage; runnable on a host too:
//   node image/bundle.mjs <project dir> <output dir>
import { build } from 'esbuild';
import { cp, mkdir, readdir, readFile, rm, stat, writeFile, chmod } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

const [projectArg = '.', outArg = 'build/image-app'] = process.argv.slice(2);
const project = path.resolve(projectArg);
const out = path.resolve(outArg);
const entry = path.join(project, 'src/cli/main.ts');

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });

// netlink stays external: its CJS code locates the addon relative to its own __dirname, which
// does not survive bundling into an ES module.
const external = ['netlink'];

// CJS dependencies (pino and its helpers) call require() for Node built-ins; an ESM bundle has
// no require, so one is provided. __dirname/__filename are defined for the same reason.
const banner = [
  "import { createRequire as __interlockCreateRequire } from 'node:module';",
  "import { fileURLToPath as __interlockFileURLToPath } from 'node:url';",
  'const require = __interlockCreateRequire(import.meta.url);',
  'const __filename = __interlockFileURLToPath(import.meta.url);',
  "const __dirname = __interlockFileURLToPath(new URL('.', import.meta.url));",
].join('\n');

const result = await build({
  entryPoints: [entry],
  outfile: path.join(out, 'interlock.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external,
  banner: { js: banner },
  legalComments: 'none',
  minifySyntax: true,
  minifyWhitespace: true,
  metafile: true,
  logLevel: 'warning',
});

// The entry may or may not carry a hashbang; the installed command needs exactly one, first.
const bundlePath = path.join(out, 'interlock.mjs');
let code = await readFile(bundlePath, 'utf8');
code = code.replace(/^#!.*\n/, '');
await writeFile(bundlePath, `#!/usr/bin/env node\n${code}`);
await chmod(bundlePath, 0o755);

// import() with a computed specifier is left alone by esbuild and then resolves relative to the
// bundle inside the image, where no such file exists: say so at build time, not in a pod.
for (const match of code.matchAll(/\bimport\(\s*([A-Za-z_$][\w$]*)\s*\)/g)) {
  console.warn(`bundle: warning: import(${match[1]}) has a computed specifier; esbuild cannot bundle its target, so it will not load in the image`);
}

const requireFromProject = createRequire(path.join(project, 'package.json'));

async function copyRuntimeFiles(pkgName, keep) {
  const pkgJson = requireFromProject.resolve(`${pkgName}/package.json`);
  const srcDir = path.dirname(pkgJson);
  const dstDir = path.join(out, 'node_modules', pkgName);
  await mkdir(dstDir, { recursive: true });
  await cp(pkgJson, path.join(dstDir, 'package.json'));
  for (const rel of keep) {
    await cp(path.join(srcDir, rel), path.join(dstDir, rel), {
      recursive: true,
      // Type declarations and source maps are never loaded at run time.
      filter: (p) => !/\.(d\.ts|map)$/.test(p),
    });
  }
  return dstDir;
}

await copyRuntimeFiles('netlink', ['dist', 'prebuilds/linux-x64', 'LICENSE']);
// node-gyp-build is netlink's only run-time dependency (node-addon-api is headers for compiling).
const netlinkRequire = createRequire(requireFromProject.resolve('netlink/package.json'));
const ngbPkg = netlinkRequire.resolve('node-gyp-build/package.json');
const ngbDst = path.join(out, 'node_modules', 'node-gyp-build');
await mkdir(ngbDst, { recursive: true });
for (const f of ['package.json', 'index.js', 'node-gyp-build.js', 'LICENSE']) {
  await cp(path.join(path.dirname(ngbPkg), f), path.join(ngbDst, f));
}

// Licence texts of everything that went into the bundle or beside it, since the image
// redistributes them (most of these licences require the notice to travel with the code).
async function writeThirdPartyNotices() {
  const packageDirs = new Set();
  for (const input of Object.keys(result.metafile.inputs)) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) packageDirs.add(path.resolve(process.cwd(), match[1]));
  }
  packageDirs.add(path.dirname(requireFromProject.resolve('netlink/package.json')));
  packageDirs.add(path.dirname(ngbPkg));
  const sections = [];
  for (const dir of [...packageDirs].sort()) {
    const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
    const licenceFile = (await readdir(dir)).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    const text = licenceFile ? await readFile(path.join(dir, licenceFile), 'utf8') : `(no licence file; package.json says ${pkg.license ?? 'nothing'})`;
    sections.push(`${pkg.name}@${pkg.version} (${pkg.license ?? 'unknown'})\n\n${text.trim()}\n`);
  }
  await writeFile(path.join(out, 'THIRD_PARTY_NOTICES.txt'), sections.join(`\n${'-'.repeat(72)}\n\n`));
  return sections.length;
}
const noticeCount = await writeThirdPartyNotices();

async function du(p) {
  const s = await stat(p);
  if (!s.isDirectory()) return s.size;
  let total = 0;
  for (const name of await readdir(p)) total += await du(path.join(p, name));
  return total;
}

const inputs = Object.keys(result.metafile.inputs).length;
console.log(`bundle: ${inputs} modules -> ${bundlePath}; ${noticeCount} third-party licences; app total ${(await du(out) / 1024).toFixed(0)} KiB`);
