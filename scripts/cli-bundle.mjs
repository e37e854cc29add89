// What the two bundles of the CLI Interlock ships have in common: the npm bin's
// (scripts/build-bin.mjs) and the start-up snapshot's (scripts/build-snapshot.mjs).
import { buildInfo, buildInfoModule } from './build-info.mjs';

/** `interlock version` reports the commit and time of this build, not the source's `unknown`. */
export function stampBuildInfo(root) {
  return {
    name: 'stamp-build-info',
    setup(pluginBuild) {
      pluginBuild.onLoad({ filter: /src[\\/]cli[\\/]build-info\.ts$/ }, () => ({
        contents: buildInfoModule(buildInfo(root)),
        loader: 'ts',
      }));
    },
  };
}

/**
 * pino's worker-thread transports: Interlock logs synchronously to a file descriptor
 * (src/output/logger.ts) and never starts one, yet pino loads them, and with them thread-stream and
 * node:worker_threads, when it loads. Left out, they are in no process's heap.
 */
export function noPinoTransport(bundleName) {
  return {
    name: 'no-pino-transport',
    setup(pluginBuild) {
      pluginBuild.onLoad({ filter: /[\\/]node_modules[\\/]pino[\\/]lib[\\/]transport\.js$/ }, () => ({
        contents: `module.exports = function transport() { throw new Error('pino transports are not in the ${bundleName}'); };`,
        loader: 'js',
      }));
    },
  };
}

/**
 * pino's own destinations: Interlock hands pino a stream of its own (src/output/logger.ts), so
 * sonic-boom (and node:assert, which it loads) never writes a byte, and pino asks node:worker_threads
 * only whether it runs in a worker, for those destinations. Every process that starts the CLI
 * loaded (or, from the start-up snapshot, deserialised) them all the same; left out, they cost
 * nothing. The stub is a class so that pino's `instanceof SonicBoom` tests keep answering false.
 */
export function noPinoDestinations(bundleName) {
  return {
    name: 'no-pino-destinations',
    setup(pluginBuild) {
      pluginBuild.onLoad({ filter: /[\\/]node_modules[\\/]sonic-boom[\\/]index\.js$/ }, () => ({
        contents: `module.exports = class SonicBoom { constructor() { throw new Error('pino destinations are not in the ${bundleName}'); } };`,
        loader: 'js',
      }));
      pluginBuild.onLoad({ filter: /[\\/]node_modules[\\/]pino[\\/]lib[\\/]tools\.js$/ }, async (args) => {
        const { readFile } = await import('node:fs/promises');
        const source = await readFile(args.path, 'utf8');
        const asked = "const { isMainThread } = require('worker_threads')";
        if (!source.includes(asked))
          throw new Error(`pino changed: ${args.path} no longer asks worker_threads as expected`);
        // The CLI never runs in a worker thread.
        return { contents: source.replace(asked, 'const isMainThread = true'), loader: 'js' };
      });
    },
  };
}

/**
 * netlink's link attributes (rt/ifla.js, a quarter of the CLI bundle) cover every link kind the
 * kernel knows: bridges, VXLAN, bonds, CAN, virtual functions, ... Interlock reads a link's name,
 * index and flags, and each process that starts the CLI parsed (from the snapshot, deserialised)
 * all of them. Only netlink's own parseLinkAttrs and formatLinkAttrs are kept, with the attributes
 * that are plain values; the nested ones (statistics, virtual functions, ports, XDP) are skipped,
 * as netlink skips any attribute it has no parser for.
 */
export function slimNetlinkLinkAttrs() {
  return {
    name: 'slim-netlink-link-attrs',
    setup(pluginBuild) {
      pluginBuild.onLoad({ filter: /[\\/]node_modules[\\/]netlink[\\/]dist[\\/]rt[\\/]ifla\.js$/ }, async (args) => {
        const { readFile } = await import('node:fs/promises');
        const source = await readFile(args.path, 'utf8');
        const kept = ['parseLinkAttrs', 'formatLinkAttrs'].map((name) => {
          const body = new RegExp(`\\nfunction ${name}\\((\\w+)\\) \\{\\n[\\s\\S]*?\\n\\}\\n`).exec(source)?.[0];
          // An attribute line that calls another of ifla's parsers or formatters is a nested one.
          const lines = body
            ?.split('\n')
            .filter((line) => !/^\s+\w+: \(data, obj\) =>.*[^.\w](parse|format)[A-Z]\w*\(/.test(line));
          if (!lines || lines.filter((line) => /^\s+\w+: \(data, obj\) =>/.test(line)).length < 40)
            throw new Error(`netlink changed: ${args.path} has no ${name} as expected`);
          return `${lines.join('\n')}exports.${name} = ${name};\n`;
        });
        return { contents: `"use strict";\nconst structs = require("../structs");\n${kept.join('')}`, loader: 'js' };
      });
    },
  };
}

/**
 * esbuild's options for a bundle of the CLI. Every byte of the source and every name is read and
 * parsed (or deserialised from the blob) by each process: minified, it is half the heap;
 * keepNames keeps what error and class names say.
 */
export const CLI_BUNDLE_OPTIONS = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  legalComments: 'none',
  minify: true,
  keepNames: true,
  logLevel: 'error',
};
