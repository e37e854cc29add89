import { reasonHeadline } from '../reason/guide.js';
import type { Verdict } from './decide-verdict.js';

/** The kubelet keeps at most 4096 bytes of a termination message. */
export const TERMINATION_MESSAGE_LIMIT = 4096;

const ELLIPSIS = '\n[truncated]';

/**
 * `<Reason>: <what failed>; <what to do>` first (at most 160 characters, the reason as the first
 * word, which the node agent reads), so `kubectl describe pod` shows the cause at a glance; then
 * the sentence naming the address, port, rule or file; then the configuration and the evidence.
 * Cut on a UTF-8 character boundary.
 */
export function formatTerminationMessage(verdict: Verdict, context: readonly string[] = []): string {
  const lines = [
    reasonHeadline(verdict.reason),
    oneLine(verdict.message),
    ...context,
    ...verdict.evidence.map(oneLine),
  ];
  return truncateUtf8(lines.join('\n') + '\n', TERMINATION_MESSAGE_LIMIT);
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}

export function truncateUtf8(text: string, limit: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return text;
  // A limit shorter than the marker keeps as much of the marker as fits, never more than the limit.
  if (limit < Buffer.byteLength(ELLIPSIS)) return ELLIPSIS.slice(0, Math.max(0, limit));
  let end = limit - Buffer.byteLength(ELLIPSIS);
  // Back off continuation bytes (10xxxxxx) so a multi-byte character is never split.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8') + ELLIPSIS;
}
