/** The version lives in config/ so the manifests below the CLI can label what they print with it. */
export { VERSION } from '../config/version.js';
