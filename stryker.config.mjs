// `npm run mutate`: mutation testing of the pure core with StrykerJS and the vitest runner. Not
// part of CI (a whole-core run takes a long time on two cores). Narrow the scope for a quick run:
//   npm run mutate -- --mutate 'src/addr/**/*.ts'
// Stryker copies the repository into .stryker-tmp/ and mutates the copy; the repository is
// self-contained (nothing is read outside it), so the copy runs as the original does.
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts' },
  mutate: [
    'src/trace/**/*.ts',
    'src/expect/**/*.ts',
    'src/rules/**/*.ts',
    '!src/rules/read/**',
    'src/addr/**/*.ts',
    'src/config/**/*.ts',
    'src/verdict/**/*.ts',
  ],
  // Two cores shared with other work: one test process at a time.
  concurrency: 1,
  coverageAnalysis: 'perTest',
  // Re-runs test only the mutants whose code or tests changed since the last run.
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  ignorePatterns: ['dist', '.bench', 'reports', 'e2e', 'image', 'docs'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 85, low: 70, break: null },
  timeoutMS: 10_000,
};
