import type { CniAuditInput } from './cni-audit-input.js';
import type { CniFinding } from './cni-finding.js';
import { confFiles } from './conf-files.js';
import { loadConfigFile } from './config-file.js';
import { RUNTIME_LABEL, type RuntimeLoad } from './runtime-load.js';

/**
 * Configurations the runtime does not load that name plugins with no binary: remnants of an
 * uninstalled CNI. Harmless while another file wins; they fail pods if they ever win. A file the
 * runtime looked at and skipped (CRI-O validates every file) is reported as skipped, not here:
 * CRI-O would skip it again if it sorted first, and "does not get to it" would contradict it.
 */
export function leftoverFindings(input: CniAuditInput, load: RuntimeLoad): CniFinding[] {
  const loaded = new Set([
    ...(load.ok
      ? load.networks.map((network) => network.file)
      : load.error.file === undefined
        ? []
        : [load.error.file]),
    ...load.passedOver.map((skipped) => skipped.file),
  ]);
  const libcni = input.runtime === 'crio' ? '1.3' : '1.1';
  const findings: CniFinding[] = [];
  for (const entry of confFiles(input.listing.entries)) {
    if (loaded.has(entry.name)) continue;
    const parsed = loadConfigFile(entry, libcni, input.listing.subdirectories);
    if (!parsed.ok) continue;
    const missing = parsed.list.plugins.map((plugin) => plugin.type).filter((type) => !input.inventory.get(type)?.path);
    if (missing.length === 0) continue;
    const now = load.ok
      ? `${RUNTIME_LABEL[input.runtime]} does not load it while ${load.networks[0].file} wins`
      : `${RUNTIME_LABEL[input.runtime]} does not get to it`;
    findings.push({
      code: 'Leftover',
      severity: 'warning',
      file: entry.name,
      message: `${entry.name} names ${missing.map((type) => `"${type}"`).join(', ')} with no binary in ${input.binDirs.join(', ')}; ${now}, but pods would get no sandbox if it ever sorted first`,
    });
  }
  return findings;
}
