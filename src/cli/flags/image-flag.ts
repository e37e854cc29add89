import type { DefaultedFlag } from '../../config/flag-def.js';
import { DEFAULT_IMAGE } from '../../inject/validator-container.js';
import { parseImageReference } from '../../config/flag-parsers.js';

/** Interlock's image: one flag of manifest, inject and webhook, in a file of its own so each command's table can hold it. */
export const IMAGE_FLAG: DefaultedFlag<string> = {
  name: 'image',
  kind: 'value',
  placeholder: 'IMAGE',
  help: `Interlock's image, as you pushed it (REGISTRY/mesh-interlock:TAG). Without it ${DEFAULT_IMAGE} is used, which no registry publishes, and a warning says so. webhook: the image it puts in place of the mesh's validator; without it, in a pod (POD_NAME), its own container's image, read from its pod.`,
  parse: parseImageReference,
  default: DEFAULT_IMAGE,
};
