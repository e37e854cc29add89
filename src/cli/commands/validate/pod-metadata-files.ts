import type { ConfigResult } from '../../../config/config-error.js';
import { parseDownwardApiFile } from '../../../config/downward-api.js';
import type { FlagDef } from '../../../config/flag-def.js';
import { flagSource, flagValue, type ParsedFlags } from '../../../config/parsed-flags.js';
import type { PodMetadata } from '../../../config/pod-metadata.js';
import {
  buildValidateConfig,
  POD_ANNOTATIONS_FLAG,
  POD_LABELS_FLAG,
  type ValidateConfig,
} from '../../../config/validate-config.js';
import { fail, ok, type Result } from '../../../reason/result.js';
import { readInputFile } from '../../input/read-input-file.js';

/** Kubernetes caps a pod's annotations at 256 KiB; a downward-API file quotes them, so allow twice that. */
const MAX_METADATA_BYTES = 512 * 1024;

/** validate's configuration, with the pod's downward-API files read when the flags name them. */
export function validateConfigWithPodMetadata(parsed: ParsedFlags): ConfigResult<ValidateConfig> {
  const annotations = readMetadataFile(parsed, POD_ANNOTATIONS_FLAG);
  if (!annotations.ok) return annotations;
  const labels = readMetadataFile(parsed, POD_LABELS_FLAG);
  if (!labels.ok) return labels;
  const metadata: PodMetadata = { annotations: annotations.value, labels: labels.value };
  return buildValidateConfig(parsed, metadata);
}

/** The pod's annotations file of `--pod-annotations`, undefined without the flag (explain's). */
export function podAnnotationsOf(parsed: ParsedFlags): Result<Map<string, string> | undefined, 'ConfigInvalid'> {
  return readMetadataFile(parsed, POD_ANNOTATIONS_FLAG);
}

/** A given file must be read whole: missing, unreadable, not regular or too large is a configuration error. */
function readMetadataFile(
  parsed: ParsedFlags,
  flag: FlagDef<string>,
): Result<Map<string, string> | undefined, 'ConfigInvalid'> {
  const path = flagValue(parsed, flag);
  if (path === undefined) return ok(undefined);
  const source = flagSource(parsed, flag) ?? `--${flag.name}`;
  const text = readInputFile(source, path, MAX_METADATA_BYTES);
  if (!text.ok)
    return fail(
      'ConfigInvalid',
      text.error.reason === 'RulesUnparseable'
        ? `${source} ${JSON.stringify(path)} is larger than the ${MAX_METADATA_BYTES / 1024} KiB a downward-API file of pod metadata can hold`
        : text.error.message,
    );
  const entries = parseDownwardApiFile(text.value);
  if (!entries.ok) return fail('ConfigInvalid', `${source} ${JSON.stringify(path)}: ${entries.error.message}`);
  return ok(entries.value);
}
