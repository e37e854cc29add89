/** What `interlock node` does with a pod whose capture two sweeps found lost. */
export type RecheckAction = 'report' | 'delete';
export const RECHECK_ACTIONS: readonly RecheckAction[] = ['report', 'delete'];
