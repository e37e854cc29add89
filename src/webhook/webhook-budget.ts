import type { JsonShapeLimits } from '../file/json-shape.js';

const MiB = 1024 * 1024;
const KiB = 1024;

/**
 * The webhook container's memory limit, as `manifest --webhook` prints it. Everything the server
 * holds at once is sized from it here, and only here: over the limit the kernel kills the process
 * and every admission in flight with it.
 */
export const WEBHOOK_MEMORY_LIMIT_MIB = 128;
/** An idle webhook's RSS (the start-up snapshot, Node 20): measured 59 MiB, rounded up. */
const IDLE_RSS_MIB = 64;
/**
 * Of the room above the idle RSS, the share the server may plan to hold; the rest is left to
 * garbage awaiting collection (V8 lets the heap grow past its live size before a major GC).
 */
const PLANNED_SHARE = 3 / 4;
/** A parsed JSON value's heap cost, worst measured (a member of an object in dictionary mode: 130 bytes). */
const BYTES_PER_VALUE = 160;
/** A body while parsed: its chunks, their concatenation, and the string (UTF-16 at worst). */
const BODY_COPIES = 4;
/** An open TLS connection (OpenSSL state, socket buffers, the HTTP parser): measured under 64 KiB. */
const CONNECTION_BYTES = 64 * KiB;
/**
 * The first bytes of every request are held on its connection's share, not the shared buffer
 * budget, so large hostile bodies cannot starve an ordinary pod (the meshes' pods are 3-20 KiB).
 */
export const SMALL_REQUEST_BYTES = 64 * KiB;

export interface WebhookBudget {
  /** Request bytes past each request's first SMALL_REQUEST_BYTES, buffered at once across requests. */
  readonly bufferBudgetBytes: number;
  /** Open connections at once (a TLS handshake included); more are refused at accept. */
  readonly maxConnections: number;
  /** Bounds on the one body parsed at a time (parsing is synchronous). */
  readonly shape: JsonShapeLimits;
}

/** What the server may hold within `limitMiB`, given the largest body it reads. */
export function webhookBudget(maxBodyBytes: number, limitMiB = WEBHOOK_MEMORY_LIMIT_MIB): WebhookBudget {
  const planned = (limitMiB - IDLE_RSS_MIB) * PLANNED_SHARE * MiB;
  const parse = planned / 3;
  const buffers = planned / 4;
  const connections = planned - parse - buffers;
  return {
    bufferBudgetBytes: Math.floor(buffers),
    maxConnections: Math.floor(connections / (CONNECTION_BYTES + SMALL_REQUEST_BYTES)),
    shape: {
      // A pod nests about 12 levels (managedFields a few more): far from any stack limit.
      maxDepth: 64,
      maxValues: Math.max(0, Math.floor((parse - BODY_COPIES * maxBodyBytes) / BYTES_PER_VALUE)),
    },
  };
}
