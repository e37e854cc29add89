import type { CniVerdict } from './audit-cni.js';
import type { CniFinding } from './cni-finding.js';
import type { CniListing } from './cni-listing.js';
import { confFiles } from './conf-files.js';
import { loadConfigFile } from './config-file.js';
import type { HeldNetwork, RuntimeCniConfig } from './runtime-cni-config.js';

/** What the audit predicted from the directory, and where it looked. */
export interface Prediction {
  readonly verdict: CniVerdict;
  readonly listing: CniListing;
  readonly binDirs: readonly string[];
}

/** The file of the directory a held network came from: its exact text, else its name and chain. */
interface HeldFile {
  readonly file: string;
  readonly exact: boolean;
}

const trimSlash = (path: string): string => (path.length > 1 ? path.replace(/\/+$/, '') : path);
const chainText = (chain: readonly string[]): string => `[${chain.join(' -> ')}]`;

/**
 * The prediction against what containerd says it loaded: its last load's error, and every place
 * where the two disagree (the directory, the plugin directories, the pod network's file). Pods
 * get what the runtime holds, so a disagreement is an error: the prediction is not the node.
 */
export function runtimeAgreement(prediction: Prediction, held: RuntimeCniConfig): CniFinding[] {
  const findings: CniFinding[] = [];
  if (held.lastLoadStatus !== 'OK')
    findings.push({
      code: 'RuntimeLoadFailed',
      severity: 'error',
      message: `containerd reports that its last load of ${held.confDir} failed (lastCNILoadStatus): "${held.lastLoadStatus}"`,
    });
  const { verdict } = prediction;
  if (trimSlash(held.confDir) !== trimSlash(verdict.dir)) {
    findings.push(
      disagrees(
        `containerd loads its CNI configuration from ${held.confDir}, not from ${verdict.dir}, which this audit read: the prediction is about files the runtime does not use`,
      ),
    );
    return findings;
  }
  const audited = prediction.binDirs.map(trimSlash);
  if (held.pluginDirs.map(trimSlash).join('\0') !== audited.join('\0'))
    findings.push(
      disagrees(
        `containerd looks for plugin binaries in ${held.pluginDirs.join(', ') || '(none)'}, not in ${audited.join(', ')}, which this audit searched: what it found there is not what the runtime runs`,
      ),
    );
  const network = held.networks[0];
  const predicted = verdict.loads?.file;
  if (network === undefined) {
    if (predicted !== undefined && held.lastLoadStatus === 'OK')
      findings.push(
        disagrees(
          `containerd holds no pod network, but the audit predicts it loads ${predicted}: the runtime has not loaded the directory as it is now`,
        ),
      );
    return findings;
  }
  const source = heldFile(network, prediction.listing);
  const comparison = compareHeld(network, source, predicted, verdict.dir);
  if (comparison) findings.push(comparison);
  return findings;
}

function compareHeld(
  network: HeldNetwork,
  source: HeldFile | undefined,
  predicted: string | undefined,
  dir: string,
): CniFinding | undefined {
  const what = `network "${network.name}" ${chainText(network.chain)}`;
  const outcome =
    predicted === undefined ? 'the audit predicts it loads no network' : `the audit predicts ${predicted}`;
  const stale =
    'the runtime has not reloaded since the directory changed (containerd 1.6 ignores a file renamed into it until the next write there), and pods get what it holds';
  if (source === undefined)
    return disagrees(`containerd holds ${what}, which no file of ${dir} carries now, while ${outcome}: ${stale}`);
  if (source.file !== predicted)
    return { ...disagrees(`containerd loaded ${source.file} (${what}), while ${outcome}: ${stale}`), file: source.file };
  if (source.exact) return undefined;
  return {
    code: 'RuntimeDisagrees',
    severity: 'warning',
    file: source.file,
    message: `containerd holds ${what} from ${source.file} as it was before its last change (the held text differs from the file's, the chain is the same): ${stale}`,
  };
}

function heldFile(network: HeldNetwork, listing: CniListing): HeldFile | undefined {
  const entries = confFiles(listing.entries);
  const exact = entries.find((entry) => entry.text === network.source);
  if (exact) return { file: exact.name, exact: true };
  for (const entry of entries) {
    const load = loadConfigFile(entry, '1.1');
    if (!load.ok || load.list.name !== network.name) continue;
    const chain = load.list.plugins.map((plugin) => plugin.type);
    // A single-plugin file is re-encoded into a list by libcni: its text never matches, its shape does.
    if (chain.join('\0') === network.chain.join('\0')) return { file: entry.name, exact: load.wrapped };
  }
  return undefined;
}

function disagrees(message: string): CniFinding {
  return { code: 'RuntimeDisagrees', severity: 'error', message };
}
