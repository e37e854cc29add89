import { defineConfig } from 'vitest/config';

// Unit and namespace tests. Namespace tests need root (ip netns, iptables) and the built CLI in
// dist/; scripts/test.sh provides both. Container tests live in e2e/ with their own config.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The validator runs as other uids: they read a world-readable copy of dist/, made per run.
    globalSetup: ['test/harness/stage-global-setup.ts'],
  },
});
