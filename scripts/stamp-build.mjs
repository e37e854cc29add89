// Writes the commit and build time into the compiled dist/cli/build-info.js (`npm run build`).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildInfo, buildInfoModule } from './build-info.mjs';

const root = path.resolve(import.meta.dirname, '..');
writeFileSync(path.join(root, 'dist/cli/build-info.js'), buildInfoModule(buildInfo(root)));
