import type { TestProject } from 'vitest/node';
import { CriNode, type CriNodeHandle } from './cri-node.js';
import { buildPauseImage } from './images.js';

declare module 'vitest' {
  export interface ProvidedContext {
    criNode: CriNodeHandle;
  }
}

/**
 * One node for the whole CRI suite (starting containerd and importing the images is most of a
 * node's cost): started here, attached to by each test file, stopped here on success, failure
 * and interruption. A run killed outright leaves it to the next run's sweep (CriNode.start).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await buildPauseImage();
  const node = await CriNode.start();
  project.provide('criNode', node.handle);
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= node.stop());
  const interrupted = (signal: NodeJS.Signals) => {
    void stop().finally(() => process.kill(process.pid, signal));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  return async () => {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await stop();
  };
}
