import { X509Certificate } from 'node:crypto';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Admission } from './admit.js';

/** What the server reports, as a port; `promWebhookMetrics` is the Prometheus implementation. */
export interface WebhookMetrics {
  admitted(admission: Admission, seconds: number): void;
  tlsReload(result: 'ok' | 'error'): void;
  /** The certificate now served (PEM chain, leaf first): its expiry is what an alert watches. */
  servingCertificate(pem: Buffer): void;
}

export function promWebhookMetrics(registry: Registry): WebhookMetrics {
  const registers = [registry];
  const requests = new Counter({
    name: 'interlock_webhook_requests_total',
    help: 'Admission requests answered, by outcome (patched, unchanged, skipped, denied, invalid).',
    labelNames: ['outcome'],
    registers,
  });
  const patches = new Counter({
    name: 'interlock_webhook_patches_total',
    help: 'Mesh validator containers replaced by Interlock, by container name.',
    labelNames: ['container'],
    registers,
  });
  const errors = new Counter({
    name: 'interlock_webhook_errors_total',
    help: 'Requests answered without being read (malformed, too-large, too-complex, deadline, busy, internal), per --on-error.',
    labelNames: ['cause'],
    registers,
  });
  const latency = new Histogram({
    name: 'interlock_webhook_request_duration_seconds',
    help: 'Time from the request to its answer (monotonic clock).',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers,
  });
  const reloads = new Counter({
    name: 'interlock_webhook_tls_reloads_total',
    help: 'Certificate reloads from the mounted files, by result.',
    labelNames: ['result'],
    registers,
  });
  const expiry = new Gauge({
    name: 'interlock_webhook_certificate_expiry_timestamp_seconds',
    help: 'When the serving certificate in use expires, as Unix time (0 until one is read: an expiry alert then fires).',
    registers,
  });
  return {
    servingCertificate: (pem) => {
      const leaf = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem.toString('utf8'))?.[0];
      try {
        if (leaf) expiry.set(Math.floor(new Date(new X509Certificate(leaf).validTo).getTime() / 1000));
      } catch {
        // createSecureContext accepted it, so this is not reached; the gauge then keeps its last value.
      }
    },
    admitted: (admission, seconds) => {
      requests.inc({ outcome: admission.outcome });
      if (admission.cause) errors.inc({ cause: admission.cause });
      for (const container of admission.containers)
        if (container.outcome === 'patched') patches.inc({ container: container.name });
      latency.observe(seconds);
    },
    tlsReload: (result) => reloads.inc({ result }),
  };
}
