import { VERSION } from '../config/version.js';
import { BUILD_INFO } from './build-info.js';

/** The version lives in config/ so the manifests below the CLI can label what they print with it. */
export { VERSION };

/** What `interlock version` and every command's `--version` print. */
export function versionText(): string {
  return `interlock ${VERSION}\ncommit: ${BUILD_INFO.commit}\nbuilt: ${BUILD_INFO.date}\nnode: ${process.version}\n`;
}
