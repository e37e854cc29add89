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
