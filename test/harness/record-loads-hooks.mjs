// The resolve hook of record-loads.mjs (it runs on the loader's own thread).
import { appendFileSync } from 'node:fs';

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const log = process.env.INTERLOCK_LOAD_LOG;
  if (log) appendFileSync(log, `${resolved.url}\n`);
  return resolved;
}
