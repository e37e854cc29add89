#!/usr/bin/env -S node --max-old-space-size=192 --max-semi-space-size=2
// The heap cap of scripts/node-runtime-flags.json (a test keeps the two equal).
'use strict';
// The npm bin (package.json `bin`, copied to dist/bin/interlock.cjs by scripts/build-bin.mjs): runs
// the CLI from one CommonJS bundle, interlock-bundle.cjs, compiled with the V8 code cache built
// beside it. A validator started from the plain modules spent most of its CPU resolving, reading
// and compiling some 200 files; in a node-boot storm on a 2-core node that CPU decides whether
// 110 validators meet their deadline. The cache holds the bytecode of what `interlock version`
// ran when it was built: V8 takes it only for this bundle under the node and V8 flags that made
// it, and otherwise compiles the bundle as usual (a cache is never needed, only faster).
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { Script } = require('node:vm');

const BUNDLE = join(__dirname, 'interlock-bundle.cjs');
const CODE_CACHE = join(__dirname, 'interlock-bundle.code-cache');

/** The bundle as a CommonJS module's function, compiled with the code cache when there is one. */
function compileBundle() {
  let cachedData;
  try {
    cachedData = readFileSync(CODE_CACHE);
  } catch {
    cachedData = undefined; // built without one: compiled as usual
  }
  const source = readFileSync(BUNDLE, 'utf8');
  const wrapper = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  return new Script(wrapper, { filename: BUNDLE, cachedData });
}

/** Runs the CLI; its composition root exits. */
function runBundle(script) {
  const bundleModule = { exports: {} };
  // The launcher's require: netlink's raw.js (left out of the bundle) resolves from node_modules.
  script.runInThisContext()(bundleModule.exports, require, bundleModule, BUNDLE, __dirname);
}

if (require.main === module) runBundle(compileBundle());
else module.exports = { compileBundle, runBundle };
