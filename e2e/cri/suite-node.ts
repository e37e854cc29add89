import { inject } from 'vitest';
import { CriNode } from './cri-node.js';

/** The suite's node (started by the global setup), with an empty CNI conf dir and no pods. */
export async function startNode(): Promise<CriNode> {
  const node = CriNode.attach(inject('criNode'));
  await node.removeAllPods();
  await node.clearConfigs();
  return node;
}
