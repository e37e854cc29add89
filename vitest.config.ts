import { defineConfig } from 'vitest/config';

/**
 * The suite in four projects, by what a test needs (docs/testing.md). Membership is by path:
 * `test/**` is `unit` unless its name ends in `.root.test.ts`; `e2e/**` is `containers`, and
 * `e2e/cri/**` is `cri`. `unit` runs without any capability (scripts/test-unit.sh), so a unit
 * file that needs root fails there instead of passing on a root machine.
 *
 * `npx vitest run` runs them in this order (groupOrder); scripts/test.sh runs each once what
 * it needs is ready.
 */
const ROOT_TESTS = 'test/**/*.root.test.ts';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [ROOT_TESTS],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          pool: 'forks',
          // The tests of the built CLI (help, completion, errors, deadlines) run a world-readable
          // copy of dist/, made per run when dist/ exists; the core's tests need no build.
          globalSetup: ['test/harness/stage-global-setup.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        // Namespaces and root: ip netns, iptables and nft, other uids, cgroups; the built CLI.
        test: {
          name: 'root',
          include: [ROOT_TESTS],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          pool: 'forks',
          // The validator runs as other uids: they read a world-readable copy of dist/, made per run.
          globalSetup: ['test/harness/stage-global-setup.ts'],
          sequence: { groupOrder: 1 },
        },
      },
      {
        // Real containers (testcontainers): root, a Docker engine and the image (scripts/image.sh).
        test: {
          name: 'containers',
          include: ['e2e/**/*.test.ts'],
          exclude: ['e2e/cri/**', 'e2e/cluster/**'],
          // One file at a time, tests within a file in order: the machine has 2 cores, and the
          // tests share one Docker engine.
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 120_000,
          env: {
            // Ryuk's image cannot be pulled here; the suites stop their own containers.
            TESTCONTAINERS_RYUK_DISABLED: 'true',
            TESTCONTAINERS_HOST_OVERRIDE: 'localhost',
          },
          sequence: { groupOrder: 2 },
        },
      },
      {
        // The kubelet's path: containerd's CRI plugin with real CNI plugins (e2e/cri/). Root,
        // containerd, the CNI plugins, kubectl, a Docker engine (to export the images) and the
        // image. One node for the whole project, started by the global setup.
        test: {
          name: 'cri',
          include: ['e2e/cri/**/*.test.ts'],
          globalSetup: ['e2e/cri/global-setup.ts'],
          // One file at a time: the files share the node, and the machine has 2 cores.
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 3 },
        },
      },
      {
        // Kubernetes itself: etcd, the API server, controller manager, scheduler, kube-proxy and
        // the kubelet v1.33.13 built from their Go modules (scripts/cluster.sh), on a containerd of
        // their own. One cluster for the project, started and removed by the global setup.
        test: {
          name: 'cluster',
          include: ['e2e/cluster/**/*.test.ts'],
          globalSetup: ['e2e/cluster/global-setup.ts'],
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 300_000,
          sequence: { groupOrder: 4 },
        },
      },
    ],
  },
});
