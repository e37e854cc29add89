// Regenerates the README's flag, exit-code and reason tables from the code (src/config), and
// docs/cli.md from the command table (src/cli/command-table.ts): `npm run docs`.
// test/unit/config-readme.test.ts and test/cli/cli-reference.test.ts fail when they disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import { ALL_FLAGS } from '../dist/cli/all-flags.js';
import { cliReference } from '../dist/cli/cli-reference.js';
import { COMMANDS } from '../dist/cli/command-table.js';
import { manifestExample } from '../dist/cli/readme-examples.js';
import { exitCodeTable, flagTable, reasonTable, replaceGenerated } from '../dist/cli/readme-tables.js';

const path = new URL('../README.md', import.meta.url);
let readme = readFileSync(path, 'utf8');
readme = replaceGenerated(readme, 'flags', flagTable(ALL_FLAGS));
readme = replaceGenerated(readme, 'exit-codes', exitCodeTable());
readme = replaceGenerated(readme, 'reasons', reasonTable());
readme = replaceGenerated(readme, 'manifest-linkerd', await manifestExample('linkerd'));
readme = replaceGenerated(readme, 'manifest-istio', await manifestExample('istio'));
writeFileSync(path, readme);
console.log('README.md: flag, exit-code and reason tables and manifest examples regenerated');
writeFileSync(new URL('../docs/cli.md', import.meta.url), cliReference(COMMANDS));
console.log('docs/cli.md: regenerated from the command table');
