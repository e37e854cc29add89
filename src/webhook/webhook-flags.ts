import { parseDurationMs } from '../config/duration.js';
import type { FlagDef } from '../config/flag-def.js';
import { fail, ok, type Result } from '../reason/result.js';
import type { OnError } from './admit.js';

const path = (value: string): Result<string, 'ConfigInvalid'> =>
  value.trim() ? ok(value.trim()) : fail('ConfigInvalid', 'expected a file path');
const duration =
  (minMs: number, maxMs: number, range: string) =>
  (value: string): Result<number, 'ConfigInvalid'> => {
    const ms = parseDurationMs(value);
    return ms !== undefined && ms >= minMs && ms <= maxMs
      ? ok(ms)
      : fail('ConfigInvalid', `expected a duration from ${range} (2s, 500ms)`);
  };
/** The API server refuses a request over 3 MiB, so no AdmissionReview is larger; the memory budget assumes it. */
const MAX_REQUEST_BYTES = 3 * 1024 * 1024;
const bytes = (value: string): Result<number, 'ConfigInvalid'> =>
  /^\d{1,9}$/.test(value) && Number(value) >= 4096 && Number(value) <= MAX_REQUEST_BYTES
    ? ok(Number(value))
    : fail('ConfigInvalid', `expected a byte count from 4096 to ${MAX_REQUEST_BYTES}`);
const bind = (value: string): Result<{ host: string; port: number }, 'ConfigInvalid'> => {
  const match = /^(.*):(\d{1,5})$/.exec(value.trim());
  const port = match ? Number(match[2]) : NaN;
  return match && port <= 65535
    ? ok({ host: match[1]!.replace(/^\[|\]$/g, '') || '0.0.0.0', port })
    : fail('ConfigInvalid', 'expected HOST:PORT (0.0.0.0:8443, 127.0.0.1:0)');
};

/** The flags of `interlock webhook` (besides --image, --log-level and --help, shared with other commands). */
export const WEBHOOK_FLAGS: readonly FlagDef[] = [
  {
    name: 'bind',
    kind: 'value',
    env: 'INTERLOCK_WEBHOOK_BIND',
    placeholder: 'HOST:PORT',
    help: 'Where the webhook serves HTTPS for the API server: /mutate (and /healthz, /readyz) (default 0.0.0.0:8443).',
    parse: bind,
    default: { host: '0.0.0.0', port: 8443 },
  },
  {
    name: 'metrics-bind',
    kind: 'value',
    env: 'INTERLOCK_WEBHOOK_METRICS_BIND',
    placeholder: 'HOST:PORT',
    help: 'Where the webhook serves plain HTTP for Prometheus and the kubelet: /metrics, /healthz, /readyz (default 0.0.0.0:9090).',
    parse: bind,
    default: { host: '0.0.0.0', port: 9090 },
  },
  {
    name: 'client-ca',
    kind: 'value',
    env: 'INTERLOCK_WEBHOOK_CLIENT_CA',
    placeholder: 'FILE',
    help: "PEM CAs the caller's client certificate must chain to; a caller without one fails the TLS handshake (default: any caller; docs/admission.md).",
    parse: path,
  },
  {
    name: 'tls-cert',
    kind: 'value',
    env: 'INTERLOCK_TLS_CERT',
    placeholder: 'FILE',
    help: 'Serving certificate chain, PEM (default /etc/interlock/tls/tls.crt); reloaded when it changes.',
    parse: path,
    default: '/etc/interlock/tls/tls.crt',
  },
  {
    name: 'tls-key',
    kind: 'value',
    env: 'INTERLOCK_TLS_KEY',
    placeholder: 'FILE',
    help: 'Its private key, PEM (default /etc/interlock/tls/tls.key); reloaded when it changes.',
    parse: path,
    default: '/etc/interlock/tls/tls.key',
  },
  {
    name: 'on-error',
    kind: 'value',
    env: 'INTERLOCK_WEBHOOK_ON_ERROR',
    placeholder: 'allow|deny',
    help: "Decision for a request the webhook cannot read (malformed, oversized, too slow): allow (default) keeps the mesh's validator.",
    parse: (value) =>
      value === 'allow' || value === 'deny' ? ok<OnError>(value) : fail('ConfigInvalid', 'expected allow or deny'),
    default: 'allow',
  },
  {
    name: 'request-deadline',
    kind: 'value',
    env: 'INTERLOCK_WEBHOOK_DEADLINE',
    placeholder: 'DURATION',
    help: 'Every admission request is answered within this, monotonic clock (default 2s, 100ms to 4s: under the 5 s webhook timeout).',
    parse: duration(100, 4000, '100ms to 4s'),
    default: 2000,
  },
  {
    name: 'max-request-bytes',
    kind: 'value',
    env: 'INTERLOCK_WEBHOOK_MAX_BYTES',
    placeholder: 'BYTES',
    help: 'Largest AdmissionReview read (default and most 3145728, the API server request cap).',
    parse: bytes,
    default: MAX_REQUEST_BYTES,
  },
  {
    name: 'drain-timeout',
    kind: 'value',
    env: 'INTERLOCK_WEBHOOK_DRAIN_TIMEOUT',
    placeholder: 'DURATION',
    help: 'On SIGTERM, how long in-flight requests may take before connections close (default 20s).',
    parse: duration(0, 120_000, '0s to 2m'),
    default: 20_000,
  },
];
