// Regenerates docs/reference.md's flag, exit-code and reason tables from the code (src/config),
// its init-container examples from `interlock manifest`,
// docs/troubleshooting.md's reason table, and
// docs/cli.md from the command table (src/cli/command-table.ts): `npm run docs`.
// test/unit/config-readme.test.ts and test/cli/cli-reference.test.ts fail when they disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import { ALL_FLAGS } from '../dist/cli/all-flags.js';
import { cliReference } from '../dist/cli/cli-reference.js';
import { COMMANDS } from '../dist/cli/command-table.js';
import { manifestExample } from '../dist/cli/readme-examples.js';
import {
  exitCodeTable,
  flagTable,
  reasonTable,
  replaceGenerated,
  troubleshootingTable,
} from '../dist/cli/readme-tables.js';

const path = new URL('../docs/reference.md', import.meta.url);
let readme = readFileSync(path, 'utf8');
readme = replaceGenerated(readme, 'flags', flagTable(ALL_FLAGS));
readme = replaceGenerated(readme, 'exit-codes', exitCodeTable());
readme = replaceGenerated(readme, 'reasons', reasonTable());
readme = replaceGenerated(readme, 'manifest-linkerd', await manifestExample('linkerd'));
readme = replaceGenerated(readme, 'manifest-istio', await manifestExample('istio'));
writeFileSync(path, readme);
console.log('docs/reference.md: flag, exit-code and reason tables and manifest examples regenerated');
const troubleshooting = new URL('../docs/troubleshooting.md', import.meta.url);
writeFileSync(
  troubleshooting,
  replaceGenerated(readFileSync(troubleshooting, 'utf8'), 'troubleshooting', troubleshootingTable()),
);
console.log('docs/troubleshooting.md: reason table regenerated');
writeFileSync(new URL('../docs/cli.md', import.meta.url), cliReference(COMMANDS));
console.log('docs/cli.md: regenerated from the command table');
