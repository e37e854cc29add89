import { formatDuration } from '../../../config/duration.js';
import {
  oneOf,
  parseByteCount,
  parseDuration,
  parseNonBlank,
  parseListenAddress,
  parseNameList,
  showListenAddress,
  type ListenAddress,
} from '../../../config/flag-parsers.js';
import type { DefaultedFlag, FlagDef } from '../../../config/flag-def.js';
import type { OnError } from '../../../webhook/admit.js';

/** The API server refuses a request over 3 MiB, so no AdmissionReview is larger; the memory budget assumes it. */
const MAX_REQUEST_BYTES = 3 * 1024 * 1024;

export const BIND_FLAG: DefaultedFlag<ListenAddress> = {
  name: 'bind',
  kind: 'value',
  env: 'INTERLOCK_WEBHOOK_BIND',
  placeholder: 'HOST:PORT',
  help: 'Where the webhook serves HTTPS for the API server: /mutate (and /healthz, /readyz) (default {default}).',
  parse: parseListenAddress('0.0.0.0:8443'),
  default: { host: '0.0.0.0', port: 8443 },
  showDefault: showListenAddress,
};

export const METRICS_BIND_FLAG: DefaultedFlag<ListenAddress> = {
  name: 'metrics-bind',
  kind: 'value',
  env: 'INTERLOCK_WEBHOOK_METRICS_BIND',
  placeholder: 'HOST:PORT',
  help: 'Where the webhook serves plain HTTP for Prometheus and the kubelet: /metrics, /healthz, /readyz (default {default}).',
  parse: parseListenAddress('0.0.0.0:9090'),
  default: { host: '0.0.0.0', port: 9090 },
  showDefault: showListenAddress,
};

export const CLIENT_CA_FLAG: FlagDef<string> = {
  name: 'client-ca',
  kind: 'value',
  env: 'INTERLOCK_WEBHOOK_CLIENT_CA',
  placeholder: 'FILE',
  help: "PEM CAs the caller's client certificate must chain to; a caller without one fails the TLS handshake (default: any caller; docs/admission.md).",
  parse: parseNonBlank('expected a file path'),
};

export const CLIENT_NAME_FLAG: FlagDef<readonly string[]> = {
  name: 'client-name',
  kind: 'value',
  env: 'INTERLOCK_WEBHOOK_CLIENT_NAME',
  placeholder: 'NAME[,NAME]',
  help: 'With --client-ca: the client certificate must also name one of these (its CN or a DNS SAN), else the connection is closed (default: any certificate of the CA).',
  parse: parseNameList,
};

export const TLS_CERT_FLAG: DefaultedFlag<string> = {
  name: 'tls-cert',
  kind: 'value',
  env: 'INTERLOCK_TLS_CERT',
  placeholder: 'FILE',
  help: 'Serving certificate chain, PEM (default {default}); reloaded when it changes.',
  parse: parseNonBlank('expected a file path'),
  default: '/etc/interlock/tls/tls.crt',
};

export const TLS_KEY_FLAG: DefaultedFlag<string> = {
  name: 'tls-key',
  kind: 'value',
  env: 'INTERLOCK_TLS_KEY',
  placeholder: 'FILE',
  help: 'Its private key, PEM (default {default}); reloaded when it changes.',
  parse: parseNonBlank('expected a file path'),
  default: '/etc/interlock/tls/tls.key',
};

export const ON_ERROR_FLAG: DefaultedFlag<OnError> = {
  name: 'on-error',
  kind: 'value',
  env: 'INTERLOCK_WEBHOOK_ON_ERROR',
  placeholder: 'allow|deny',
  help: "Decision for a request the webhook cannot read (malformed, oversized, too slow): {default} (default) keeps the mesh's validator.",
  parse: oneOf<OnError>(['allow', 'deny'], { say: 'or', exact: true }),
  default: 'allow',
};

export const REQUEST_DEADLINE_FLAG: DefaultedFlag<number> = {
  name: 'request-deadline',
  kind: 'value',
  env: 'INTERLOCK_WEBHOOK_DEADLINE',
  placeholder: 'DURATION',
  help: 'Every admission request is answered within this, monotonic clock (default {default}, 100ms to 4s: under the 5 s webhook timeout).',
  parse: parseDuration(100, 4000, '2s, 500ms'),
  default: 2000,
  showDefault: formatDuration,
};

export const MAX_REQUEST_BYTES_FLAG: DefaultedFlag<number> = {
  name: 'max-request-bytes',
  kind: 'value',
  env: 'INTERLOCK_WEBHOOK_MAX_BYTES',
  placeholder: 'BYTES',
  help: 'Largest AdmissionReview read (default and most {default}, the API server request cap).',
  parse: parseByteCount(4096, MAX_REQUEST_BYTES),
  default: MAX_REQUEST_BYTES,
};

export const DRAIN_TIMEOUT_FLAG: DefaultedFlag<number> = {
  name: 'drain-timeout',
  kind: 'value',
  env: 'INTERLOCK_WEBHOOK_DRAIN_TIMEOUT',
  placeholder: 'DURATION',
  help: 'On SIGTERM, how long in-flight requests may take before connections close (default {default}).',
  parse: parseDuration(0, 120_000, '2s, 500ms'),
  default: 20_000,
  showDefault: formatDuration,
};

/** The flags of `interlock webhook` (besides --image, --log-level and --help, shared with other commands). */
export const WEBHOOK_FLAGS: readonly FlagDef[] = [
  BIND_FLAG,
  METRICS_BIND_FLAG,
  CLIENT_CA_FLAG,
  CLIENT_NAME_FLAG,
  TLS_CERT_FLAG,
  TLS_KEY_FLAG,
  ON_ERROR_FLAG,
  REQUEST_DEADLINE_FLAG,
  MAX_REQUEST_BYTES_FLAG,
  DRAIN_TIMEOUT_FLAG,
] as readonly FlagDef[];
