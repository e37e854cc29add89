/** What `interlock node` does with a pod the CNI failed (--action): delete it, label it, or only report. */
export type NodeAction = 'delete' | 'label' | 'none';
export const NODE_ACTIONS: readonly NodeAction[] = ['delete', 'label', 'none'];
