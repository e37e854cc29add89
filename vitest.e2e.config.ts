import { defineConfig } from 'vitest/config';

// End-to-end tests: real containers, real network namespaces, real iptables. They need root, a
// Docker engine and the image (scripts/test.sh runs ensure-docker.sh and image.sh first).
export default defineConfig({
  test: {
    include: ['e2e/**/*.test.ts'],
    // The CRI suite has its own configuration (vitest.cri.config.ts): one node for all its files.
    exclude: ['e2e/cri/**'],
    // One file at a time, tests within a file in order: the machine has 2 cores, and the tests
    // share one Docker engine.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    env: {
      // Ryuk's image cannot be pulled here; the suites stop their own containers.
      TESTCONTAINERS_RYUK_DISABLED: 'true',
      TESTCONTAINERS_HOST_OVERRIDE: 'localhost',
    },
  },
});
