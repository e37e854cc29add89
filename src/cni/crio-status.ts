import { fail, ok, type Result } from '../reason/result.js';
import { isJsonObject } from './go-json.js';

/**
 * What CRI-O's verbose `Status` answers (server/runtime_status.go, `createRuntimeInfo`): one info
 * key, `config`, the JSON of its pause image (`sandboxImage`) and, from v1.33.0, its
 * `[crio.runtime]` table (`crio`, the Go struct RuntimeConfig by its field names). The
 * `[crio.network]` table (network_dir, plugin_dirs, cni_default_network) is not part of it,
 * and no network it loaded is reported: nothing in it can confirm or refute the CNI audit.
 */
export interface CrioStatus {
  readonly sandboxImage: string;
  /** From v1.33.0: its `[crio.runtime]` table's default runtime handler (`crun`, `runc`, ...). */
  readonly defaultRuntime?: string;
}

/** The part of CRI-O's answer an audit would need, and that it does not carry: said once. */
export const CRIO_STATUS_LACKS =
  'CRI-O\'s verbose Status (info "config": its pause image and, from v1.33, its [crio.runtime] table) carries neither its network_dir, its plugin_dirs nor the networks it loaded';

type Invalid = 'RuntimeAnswerInvalid';
const invalid = (what: string) => fail<Invalid>('RuntimeAnswerInvalid', `CRI-O's verbose Status: ${what}`);

/** CRI-O's info map, parsed; any other shape is refused, never guessed. */
export function parseCrioStatus(info: ReadonlyMap<string, string>): Result<CrioStatus, Invalid> {
  const text = info.get('config');
  if (text === undefined) return invalid('no "config" entry');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return invalid('"config" is not JSON');
  }
  if (!isJsonObject(value)) return invalid('"config" is not an object');
  const { sandboxImage, crio } = value;
  if (typeof sandboxImage !== 'string') return invalid('"config".sandboxImage is not a string');
  if (crio === undefined) return ok({ sandboxImage });
  if (!isJsonObject(crio)) return invalid('"config".crio is not an object');
  const defaultRuntime = crio['DefaultRuntime'];
  if (typeof defaultRuntime !== 'string') return invalid('"config".crio.DefaultRuntime is not a string');
  return ok({ sandboxImage, defaultRuntime });
}
