// Empties dist/ before a build: a file whose source moved or was deleted would otherwise stay
// there, and a script or test importing its old path would pass here and fail on a clean clone.
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

rmSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'dist'), { recursive: true, force: true });
