/** Kept in step with package.json by a unit test; the bundled image has no package.json to read. */
export const VERSION = '0.1.0';
