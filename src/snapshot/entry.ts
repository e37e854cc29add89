import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { startupSnapshot } from 'node:v8';
// Evaluated while the blob is built (its addon stays closed until first use, see the build script).
import * as rtNetlink from 'netlink/dist/rt/rt.js';
import { crashCli, finishCli, runCli } from '../cli/run-cli.js';
import { readPodNetwork } from '../netlink/read-pod-network.js';
import { cannedKernelAddon } from './canned-rtnetlink.js';
import { rehearseValidate } from './rehearsal.js';
// Imported on demand by the CLI (the plain modules load them only when used); here they are
// evaluated while the blob is built. A Linkerd or Istio drop-in run goes through compat-argv.
import '../compat/compat-argv.js';
import '../cli/commands/validate/run.js';
import '../cli/commands/version/run.js';

/**
 * Entry of the start-up snapshot (`node --snapshot-blob interlock.blob validate ...`, built by
 * scripts/build-snapshot.mjs): every JavaScript module is loaded and compiled when the blob is
 * built, so an init container starts without resolving, parsing or evaluating its code. Only the
 * netlink addon, which a snapshot cannot hold, is opened at run time, from beside the blob.
 */
declare global {
  var __interlockNetlinkAddon: () => Record<string, unknown>;
  var __interlockOnDemand: (file: string) => unknown;
}

let addon: Record<string, unknown> | undefined;
// While the blob is built, the rehearsal's stand-in for the kernel (then dropped: it is no addon).
let rehearsalAddon: Record<string, unknown> | undefined;
globalThis.__interlockNetlinkAddon = () => {
  if (rehearsalAddon) return rehearsalAddon;
  if (!addon) {
    const module = { exports: {} as Record<string, unknown> };
    process.dlopen(module, join(dirname(snapshotBlobPath()), 'netlink.node'));
    addon = module.exports;
  }
  return addon;
};

/**
 * Every command but validate, and what validate needs only with NET_ADMIN or to report a failure,
 * is left out of the blob (scripts/build-snapshot.mjs lists them) and loaded on first use from
 * interlock.commands.cjs beside it: each init container deserialises only its own path.
 */
globalThis.__interlockOnDemand = (file) => {
  const bundle = resolve(dirname(snapshotBlobPath()), 'interlock.commands.cjs');
  const commands = createRequire(bundle)(bundle) as { load: (name: string) => unknown };
  return commands.load(file);
};

// Compiles the pass path into the blob (see rehearsal.ts), netlink's socket layers included: they
// run over a canned kernel instead of the addon. A failed rehearsal fails the build.
rehearseValidate(async () => {
  rehearsalAddon = cannedKernelAddon();
  try {
    return await readPodNetwork(() => Promise.resolve(rtNetlink));
  } finally {
    rehearsalAddon = undefined;
  }
})
  .then(resetTimers)
  .catch((error: unknown) => {
    process.exitCode = 1;
    console.error(error);
  });

/**
 * Node's timers keep the expiry of the earliest list they scheduled in a module variable, and a
 * timer cleared before it fired (the rehearsal's connect and sleep timers) leaves it set, trusting
 * the native timer armed for it to run and reset it. A snapshot keeps the variable but not the
 * native timer: a process started from it would then arm no native timer for any timer due later
 * than that stale expiry, so a validator that reached its first timer a few seconds late (a
 * starved node) waited forever, or exited 0 with no verdict once nothing else held its event loop.
 * A timer that fires after every other one is gone runs the reset, and the snapshot is clean.
 */
function resetTimers(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1));
}

startupSnapshot.setDeserializeMainFunction(() => {
  // In a snapshot process argv[1] is the first user argument: there is no script path.
  runCli(process.argv.slice(1), { loadRtNetlink: () => Promise.resolve(rtNetlink) })
    .then(finishCli)
    .catch(crashCli);
});

function snapshotBlobPath(): string {
  const args = process.execArgv;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? '';
    if (arg === '--snapshot-blob') return args[index + 1] ?? '.';
    if (arg.startsWith('--snapshot-blob=')) return arg.slice('--snapshot-blob='.length);
  }
  throw new Error('interlock snapshot started without --snapshot-blob');
}
