/**
 * Runs the stand-in as its own process (for kubectl checks and the bench): prints its URL on the
 * first line of stdout, seeds nodes (STANDIN_NODES), listens on STANDIN_HOST:STANDIN_PORT (default
 * 127.0.0.1, a free port), and exits on SIGTERM or when stdin closes.
 */
import { nodeObject } from './pods.js';
import { startKubeApi } from './server.js';

const api = await startKubeApi({
  bookmarkMs: Number(process.env.STANDIN_BOOKMARK_MS ?? 1000),
  host: process.env.STANDIN_HOST ?? '127.0.0.1',
  port: Number(process.env.STANDIN_PORT ?? 0),
});
for (const name of (process.env.STANDIN_NODES ?? 'node-a').split(',')) api.store.put('nodes', nodeObject(name));
process.stdout.write(`${api.url}\n`);
const stop = (): void => {
  void api.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
