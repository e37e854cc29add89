import type { KubeObject } from './types.js';

/**
 * Server-side printing (meta.k8s.io/v1 Table) for events, the columns the API server prints for
 * `kubectl get events`: kubectl asks for a Table (`Accept: ...;as=Table;...`) and otherwise prints
 * only names. Other resources fall back to plain lists.
 */
const column = (name: string, priority = 0) => ({ name, type: 'string', format: '', description: '', priority });

function age(timestamp: unknown, now: number): string {
  const at = typeof timestamp === 'string' ? Date.parse(timestamp) : NaN;
  if (Number.isNaN(at)) return '<unknown>';
  const seconds = Math.max(0, Math.floor((now - at) / 1000));
  return seconds < 120
    ? `${seconds}s`
    : seconds < 7200
      ? `${Math.floor(seconds / 60)}m`
      : `${Math.floor(seconds / 3600)}h`;
}

export function wantsTable(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((part) => part.includes('as=Table'));
}

export function eventTable(list: { metadata: Record<string, unknown>; items: KubeObject[] }, now: number): object {
  const rows = list.items.map((event) => {
    const involved = (event.involvedObject ?? {}) as { kind?: string; name?: string; fieldPath?: string };
    const source = (event.source ?? {}) as { component?: string; host?: string };
    return {
      cells: [
        age(event.lastTimestamp, now),
        event.type ?? '',
        event.reason ?? '',
        `${String(involved.kind ?? '').toLowerCase()}/${involved.name ?? ''}`,
        involved.fieldPath ?? '',
        [source.component, source.host].filter(Boolean).join(', '),
        event.message ?? '',
        age(event.firstTimestamp, now),
        event.count ?? 1,
        event.metadata.name,
      ],
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: event.metadata },
    };
  });
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: list.metadata,
    columnDefinitions: [
      column('Last Seen'),
      column('Type'),
      column('Reason'),
      column('Object'),
      column('Subobject', 1),
      column('Source', 1),
      column('Message'),
      column('First Seen', 1),
      column('Count', 1),
      column('Name', 1),
    ],
    rows,
  };
}
