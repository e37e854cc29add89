import { setTimeout as sleep } from 'node:timers/promises';
import { ok, type Result } from '../reason/result.js';
import { auditCni, judgedPluginTypes, type CniVerdict } from './audit-cni.js';
import type { CniAuditInput } from './cni-audit-input.js';
import type { CniListing } from './cni-listing.js';
import { confFiles } from './conf-files.js';
import { loadConfigFile } from './config-file.js';
import { findPluginBinary } from './find-plugin-binary.js';
import type { PluginBinary, PluginInventory } from './plugin-binary.js';
import { queryPluginVersion } from './query-plugin-version.js';
import {
  followed,
  observeRuntime,
  withObservation,
  type FollowRuntime,
  type RuntimeQuestion,
} from './observe-runtime.js';
import { readCniDir } from './read-cni-dir.js';
import type { MultusApiReader } from './multus-api-view.js';
import { readMultusApi } from './read-multus-api.js';
import type { RuntimeName } from './runtime-load.js';

export interface CniAuditOptions {
  readonly confDir: string;
  readonly binDirs: readonly string[];
  readonly runtime: RuntimeName;
  readonly meshPlugin: string;
  /** Deadline of each VERSION query; they all run at once. */
  readonly versionTimeoutMs?: number;
  /** Re-reads of a directory holding a partial file, and the wait between them. */
  readonly partialRetries?: number;
  readonly partialRetryDelayMs?: number;
  readonly maxConfNum?: number;
  readonly crioDefaultNetwork?: string;
  /** Multus's attachment directory; a directory that is not there is a node without one. */
  readonly multusConfDir?: string;
  /** The node agent's API reads for Multus: NetworkAttachmentDefinitions and the node's meshed pods. */
  readonly multusApi?: MultusApiReader;
  /** Aborted: every VERSION query under way is ended, its plugin's process group killed. */
  readonly signal?: AbortSignal;
  /** Whom to ask what the runtime loaded (its verbose CRI Status): the audit then compares its prediction with it. */
  readonly runtimeQuestion?: RuntimeQuestion;
  /** The settings the operator did not name, taken from the runtime's answer. */
  readonly followRuntime?: FollowRuntime;
}

/** The audit's adapters: read the directory, stat and ask the binaries, then the pure verdict. */
export async function runCniAudit(given: CniAuditOptions): Promise<Result<CniVerdict>> {
  const observed = given.runtimeQuestion ? await observeRuntime(given.runtimeQuestion) : undefined;
  const options = observed ? followed(given, observed) : given;
  const predicted = await predict(options);
  if (!predicted.ok) return predicted;
  const { verdict, listing } = predicted.value;
  return ok(
    observed === undefined ? verdict : withObservation({ verdict, listing, binDirs: options.binDirs }, observed),
  );
}

async function predict(options: CniAuditOptions): Promise<Result<{ verdict: CniVerdict; listing: CniListing }>> {
  const read = await readSettled(options);
  if (!read.ok) return read;
  const { listing, reads } = read.value;
  const multus = options.multusConfDir === undefined ? undefined : await readCniDir(options.multusConfDir);
  const multusListing = multus?.ok ? multus.value : undefined;
  const libcni = options.runtime === 'crio' ? '1.3' : '1.1';
  const multusApi = options.multusApi
    ? await readMultusApi(options.multusApi, listing, multusListing, options.meshPlugin, libcni)
    : undefined;
  const base: Omit<CniAuditInput, 'inventory'> = {
    listing,
    reads,
    runtime: options.runtime,
    meshPlugin: options.meshPlugin,
    binDirs: options.binDirs,
    ...(options.maxConfNum === undefined ? {} : { maxConfNum: options.maxConfNum }),
    ...(options.crioDefaultNetwork === undefined ? {} : { crioDefaultNetwork: options.crioDefaultNetwork }),
    ...(multusListing ? { multusListing } : {}),
    ...(multusApi ? { multusApi } : {}),
  };
  const inventory = await buildInventory(base, options.versionTimeoutMs ?? 2000, options.signal);
  return ok({ verdict: auditCni({ ...base, inventory }), listing });
}

/** Reads until no counted file is partial, or the retries are spent (the audit then says so). */
async function readSettled(options: CniAuditOptions): Promise<Result<{ listing: CniListing; reads: number }>> {
  const retries = options.partialRetries ?? 4;
  for (let reads = 1; ; reads++) {
    const read = await readCniDir(options.confDir, { subdirectories: options.runtime === 'crio' });
    if (!read.ok) return read;
    const libcni = options.runtime === 'crio' ? '1.3' : '1.1';
    const partial = confFiles(read.value.entries).some((entry) => {
      const load = loadConfigFile(entry, libcni);
      return !load.ok && load.error.kind === 'partial';
    });
    if (!partial || reads > retries) return ok({ listing: read.value, reads });
    await sleep(options.partialRetryDelayMs ?? 150);
  }
}

/**
 * Every plugin type any counted file names is looked up (leftovers need it); VERSION is asked,
 * concurrently, of the binaries whose answer decides: the loaded chains for containerd, every
 * parseable file's plugins for CRI-O (which validates each file that way).
 */
async function buildInventory(
  base: Omit<CniAuditInput, 'inventory'>,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<PluginInventory> {
  const libcni = base.runtime === 'crio' ? '1.3' : '1.1';
  const named = new Set<string>();
  for (const entry of confFiles(base.listing.entries)) {
    const load = loadConfigFile(entry, libcni, base.listing.subdirectories);
    if (load.ok) for (const plugin of load.list.plugins) named.add(plugin.type);
  }
  const attachments = base.multusListing ? confFiles(base.multusListing.entries) : [];
  for (const entry of attachments) {
    const load = loadConfigFile(entry, libcni);
    if (load.ok) for (const plugin of load.list.plugins) if (plugin.type === base.meshPlugin) named.add(plugin.type);
  }
  const asked = new Set<string>(named);
  if (base.runtime === 'containerd') {
    asked.clear();
    for (const type of judgedPluginTypes({ ...base, inventory: new Map() })) asked.add(type);
  }
  for (const type of asked) named.add(type);
  const binaries = await Promise.all(
    [...named].map(async (type): Promise<PluginBinary> => {
      const found = await findPluginBinary(type, base.binDirs);
      if (!found.path || !found.executable || !asked.has(type)) return { type, ...found };
      const answer = await queryPluginVersion(found.path, base.binDirs, timeoutMs, signal);
      return answer.ok
        ? { type, ...found, supportedVersions: answer.supportedVersions }
        : { type, ...found, versionError: answer.error };
    }),
  );
  return new Map(binaries.map((binary) => [binary.type, binary]));
}
