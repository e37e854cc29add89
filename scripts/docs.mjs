// Regenerates the README's flag, exit-code and reason tables from the code (src/config): `npm run docs`.
// test/unit/config-readme.test.ts fails when the README and the code disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import { ALL_FLAGS } from '../dist/cli/all-flags.js';
import { exitCodeTable, flagTable, reasonTable, replaceGenerated } from '../dist/cli/readme-tables.js';

const path = new URL('../README.md', import.meta.url);
let readme = readFileSync(path, 'utf8');
readme = replaceGenerated(readme, 'flags', flagTable(ALL_FLAGS));
readme = replaceGenerated(readme, 'exit-codes', exitCodeTable());
readme = replaceGenerated(readme, 'reasons', reasonTable());
writeFileSync(path, readme);
console.log('README.md: flag, exit-code and reason tables regenerated');
