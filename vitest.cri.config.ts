import { defineConfig } from 'vitest/config';

// The kubelet's path: containerd's CRI plugin with real CNI plugins (e2e/cri/). Needs root,
// containerd, the CNI plugins, kubectl, a Docker engine (to export the images) and the image
// (scripts/test.sh provides all). One node for the whole suite, started by the global setup.
export default defineConfig({
  test: {
    include: ['e2e/cri/**/*.test.ts'],
    globalSetup: ['e2e/cri/global-setup.ts'],
    // One file at a time: the files share the node, and the machine has 2 cores.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
