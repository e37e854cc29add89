import { defineConfig } from 'vitest/config';

// The tests `npm run mutate` (StrykerJS) runs against each mutant of the pure core: the in-process
// unit tests only. Namespace tests run the built dist/ as another uid (a mutant of src/ never
// reaches them) and need root; the foundation tests check the repository, not the core.
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/expect/**/*.test.ts', 'test/trace/**/*.test.ts', 'test/rules/**/*.test.ts', 'test/explain/**/*.test.ts'],
    testTimeout: 60_000,
    pool: 'forks',
  },
});
