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

const trimSlash = (path: string): string => path.replace(/\/+$/, '') || '/';
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
    if (predicted !== undefined)
      findings.push(
        disagrees(
          `containerd holds no pod network, but the audit predicts it loads ${predicted}: the runtime has not loaded the directory as it is now`,
        ),
      );
    return findings;
  }
  const source = heldFile(network, prediction.listing);
  const comparison = compareHeld(network, source, verdict.loads, verdict.dir);
  if (comparison) findings.push(comparison);
  return findings;
}

function compareHeld(
  network: HeldNetwork,
  source: string | undefined,
  predicted: CniVerdict['loads'],
  dir: string,
): CniFinding | undefined {
  const what = `network "${network.name}" ${chainText(network.chain)}`;
  const outcome =
    predicted === undefined ? 'the audit predicts it loads no network' : `the audit predicts ${predicted.file}`;
  const stale =
    'the runtime has not reloaded since the directory changed (containerd 1.6 ignores a file renamed into it until the next write there), and pods get what it holds';
  if (source === predicted?.file) return undefined;
  if (source !== undefined)
    return { ...disagrees(`containerd loaded ${source} (${what}), while ${outcome}: ${stale}`), file: source };
  const sameShape =
    predicted !== undefined &&
    predicted.networkName === network.name &&
    predicted.chain.join('\0') === network.chain.join('\0');
  if (!sameShape)
    return disagrees(`containerd holds ${what}, which no file of ${dir} carries now, while ${outcome}: ${stale}`);
  return {
    code: 'RuntimeDisagrees',
    severity: 'warning',
    file: predicted.file,
    message: `containerd holds ${what} with a text no file of ${dir} has now; ${predicted.file}, which the audit predicts, has the same name and chain: ${stale}`,
  };
}

/**
 * The file a held network came from: a conflist by its exact text (libcni keeps the bytes it
 * read); a single-plugin file, which libcni re-encodes into a list, by its name and plugin type.
 */
function heldFile(network: HeldNetwork, listing: CniListing): string | undefined {
  const entries = confFiles(listing.entries);
  const exact = entries.find((entry) => entry.text === network.source);
  if (exact) return exact.name;
  for (const entry of entries) {
    const load = loadConfigFile(entry, '1.1');
    if (!load.ok || !load.wrapped || load.list.name !== network.name) continue;
    if (network.chain.length === 1 && load.list.plugins[0]?.type === network.chain[0]) return entry.name;
  }
  return undefined;
}

function disagrees(message: string): CniFinding {
  return { code: 'RuntimeDisagrees', severity: 'error', message };
}
