import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');

/** A loopback port nothing listens on: a registry there refuses at once, and nothing leaves the machine. */
async function refusingPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('npm run image with a registry that refuses (the real Docker engine pulls)', () => {
  it('fails within seconds, saying which option builds without a registry', async () => {
    const base = `127.0.0.1:${await refusingPort()}/library/node:20-bookworm-slim`;
    const image = 'mesh-interlock:refused-base-test';
    const started = Date.now();
    const run = spawnSync('bash', ['scripts/image.sh', '--base', base], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, IMAGE: image, INTERLOCK_PULL_TIMEOUT: '30' },
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`could not pull the base ${base}: `);
    expect(run.stderr).toMatch(/connection refused/);
    expect(run.stderr).toContain('npm run image -- --base local (or INTERLOCK_BASE=local)');
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(spawnSync('docker', ['image', 'inspect', image]).status).not.toBe(0);
  });
});
