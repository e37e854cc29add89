// Lint, run by scripts/test.sh before the tests. src/ gets the type-checked rules; tests, e2e and
// scripts a lighter set (no type information, so they lint fast).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const functionSize = ['error', { max: 60, skipBlankLines: true, skipComments: true, IIFEs: true }];
const unusedVars = ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }];
const nodeGlobals = Object.fromEntries(
  ['process', 'console', 'Buffer', 'URL', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'globalThis'].map((name) => [name, 'readonly']),
);

/**
 * TEMPORARY allowlist: files other developers are rewriting right now, listed per file with the
 * rule they break on the base commit. Each entry is removed at merge (the rewrite must pass).
 */
const temporary = [
  // TEMPORARY: owned by cli, removed at merge.
  { files: ['src/cli/snapshot-entry.ts'], rules: { '@typescript-eslint/require-await': 'off' } },
  // TEMPORARY: owned by regions, removed at merge.
  { files: ['src/expect/questions.ts'], rules: { 'max-lines-per-function': 'off', '@typescript-eslint/no-unnecessary-type-assertion': 'off' } },
  // TEMPORARY: owned by regions, removed at merge.
  { files: ['src/trace/trace.ts'], rules: { 'max-lines-per-function': 'off', '@typescript-eslint/only-throw-error': 'off' } },
  // TEMPORARY: owned by probe, removed at merge.
  { files: ['src/probe/prove-interception.ts'], rules: { 'max-lines-per-function': 'off' } },
  // TEMPORARY: owned by rulesio, removed at merge.
  { files: ['src/rules/iptables-save/parse-iptables-save.ts'], rules: { 'max-lines-per-function': 'off' } },
  // TEMPORARY: owned by rulesio, removed at merge.
  { files: ['src/rules/nft-json/parse-nft-json.ts'], rules: { 'max-lines-per-function': 'off', '@typescript-eslint/no-unnecessary-type-assertion': 'off' } },
  // TEMPORARY: src/output has no owner in this round (the lead's call), removed at merge.
  { files: ['src/output/logger.ts'], rules: { '@typescript-eslint/no-base-to-string': 'off' } },
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.bench/**', 'reports/**', '.stryker-tmp/**'] },
  {
    files: ['src/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      'max-lines-per-function': functionSize,
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': unusedVars,
    },
  },
  {
    files: ['test/**/*.ts', 'e2e/**/*.ts', '*.config.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': unusedVars,
    },
  },
  {
    files: ['scripts/**/*.mjs', '*.js', '*.cjs', '*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: nodeGlobals },
    rules: { 'no-unused-vars': unusedVars },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...nodeGlobals, module: 'writable', require: 'readonly' } },
  },
  ...temporary,
);
