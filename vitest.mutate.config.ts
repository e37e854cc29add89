import { defineConfig } from 'vitest/config';

// The tests `npm run mutate` (StrykerJS) runs against each mutant of the pure core: the in-process
// tests only. Namespace tests run the built dist/ as another uid (a mutant of src/ never reaches
// them) and need root; the foundation tests check the repository, not the core.
export default defineConfig({
  test: {
    include: [
      'test/unit/**/*.test.ts',
      'test/expect/**/*.test.ts',
      'test/trace/**/*.test.ts',
      'test/rules/**/*.test.ts',
      'test/explain/**/*.test.ts',
      // The adversarial suite's in-process tests of the rules model: size caps, parser fuzz and
      // nft's redeclared chains (the rest of test/adversarial runs the CLI in pod namespaces).
      'test/adversarial/rules-limits.test.ts',
      'test/adversarial/rules-parser-fuzz.test.ts',
      'test/adversarial/rules-nft-duplicates.test.ts',
      // Conntrack, the hook order, inet families and side effects, on the real tools' dumps.
      'test/adversarial/rules-conntrack.test.ts',
      'test/adversarial/rules-inet-families.test.ts',
      'test/adversarial/rules-side-effects.test.ts',
    ],
    testTimeout: 60_000,
    pool: 'forks',
  },
});
