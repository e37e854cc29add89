import { fail, type Result } from '../reason/result.js';
import { parseCrioStatus, type CrioStatus } from './crio-status.js';
import { parseRuntimeCniConfig, type RuntimeCniConfig } from './runtime-cni-config.js';

/** A runtime's verbose Status, known by its shape: containerd's says what it loaded, CRI-O's does not. */
export type RuntimeStatus =
  | { readonly runtime: 'containerd'; readonly held: RuntimeCniConfig }
  | { readonly runtime: 'crio'; readonly crio: CrioStatus };

/**
 * containerd's info map has `cniconfig` (and a `config` of its own, the daemon's); CRI-O's has
 * only `config`. Whichever it is, its own parser refuses what is not exactly its shape.
 */
export function parseRuntimeStatus(info: ReadonlyMap<string, string>): Result<RuntimeStatus, 'RuntimeAnswerInvalid'> {
  if (info.has('cniconfig')) {
    const held = parseRuntimeCniConfig(info);
    return held.ok ? { ok: true, value: { runtime: 'containerd', held: held.value } } : held;
  }
  if (info.has('config')) {
    const crio = parseCrioStatus(info);
    return crio.ok ? { ok: true, value: { runtime: 'crio', crio: crio.value } } : crio;
  }
  return fail(
    'RuntimeAnswerInvalid',
    'the verbose Status has neither containerd\'s "cniconfig" nor CRI-O\'s "config" entry',
  );
}
