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
  // The build machine has two cores.
  concurrency: 2,
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
  // A mutant that loops forever is stopped this long after 1.5x its tests' own time (and counted
  // as detected, as Stryker does); 10 s spent most of a run waiting on such mutants.
  timeoutMS: 2_000,
  // A static mutant (a module-level table or constant) can only be tested by re-running every
  // test with fresh modules, about a minute each here; they are reported as Ignored and left out
  // of the score, and their number is printed with it.
  ignoreStatic: true,
};
