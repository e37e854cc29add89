import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'interlock-image-script-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * `npm run image` on a fresh machine: no engine answers `docker info`. The script is run from a
 * copy whose scripts/ensure-docker.sh is a stand-in recording that it ran, so nothing is installed.
 */
function runOnFreshMachine(): { status: number | null; stderr: string; ensured: boolean } {
  mkdirSync(path.join(dir, 'scripts'), { recursive: true });
  mkdirSync(path.join(dir, 'bin'), { recursive: true });
  copyFileSync(path.join(root, 'scripts/image.sh'), path.join(dir, 'scripts/image.sh'));
  copyFileSync(path.join(root, 'scripts/image-plan.mjs'), path.join(dir, 'scripts/image-plan.mjs'));
  const marker = path.join(dir, 'ensured');
  writeFileSync(path.join(dir, 'scripts/ensure-docker.sh'), `touch '${marker}'\nexit 3\n`);
  writeFileSync(path.join(dir, 'bin/docker'), '#!/bin/sh\nexit 1\n');
  chmodSync(path.join(dir, 'bin/docker'), 0o755);
  const bash = execFileSync('sh', ['-c', 'command -v bash'], { encoding: 'utf8' }).trim();
  const run = spawnSync(bash, [path.join(dir, 'scripts/image.sh')], {
    encoding: 'utf8',
    env: { PATH: `${path.join(dir, 'bin')}:/usr/bin:/bin` },
    timeout: 20_000,
  });
  return { status: run.status, stderr: run.stderr, ensured: existsSync(marker) };
}

describe('npm run image installs what it needs', () => {
  it('starts the engine itself through scripts/ensure-docker.sh when none answers', () => {
    const run = runOnFreshMachine();
    expect(run.ensured).toBe(true);
    expect(run.stderr).not.toMatch(/run scripts\/ensure-docker\.sh first/);
    // The stand-in fails, so the script stops there with a sentence, not a docker error.
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/could not start one/);
  });
});

/**
 * `npm run image` on a machine whose engine answers but whose registry does not: a stand-in
 * `docker` (the engine is up, no image is present, no buildx) records every call and answers
 * `pull` as told. Nothing is sent anywhere.
 */
function runWithoutRegistry(
  pull: string,
  args: readonly string[],
  env: Record<string, string> = {},
): { status: number | null; stderr: string; calls: string[]; ms: number } {
  const work = mkdtempSync(path.join(tmpdir(), 'interlock-image-registry-'));
  try {
    mkdirSync(path.join(work, 'scripts'), { recursive: true });
    mkdirSync(path.join(work, 'bin'), { recursive: true });
    for (const file of ['scripts/image.sh', 'scripts/image-plan.mjs', 'package.json'])
      copyFileSync(path.join(root, file), path.join(work, file));
    const calls = path.join(work, 'calls');
    writeFileSync(path.join(work, 'scripts/ensure-docker.sh'), `echo "ensure-docker $*" >> '${calls}'\n`);
    writeFileSync(
      path.join(work, 'bin/docker'),
      `#!/bin/sh\necho "docker $*" >> '${calls}'\ncase "$1 $2" in\n  'info '*) exit 0 ;;\n  'pull '*) ${pull} ;;\n  *) exit 1 ;;\nesac\n`,
    );
    chmodSync(path.join(work, 'bin/docker'), 0o755);
    const started = Date.now();
    const run = spawnSync('/bin/bash', [path.join(work, 'scripts/image.sh'), ...args], {
      encoding: 'utf8',
      env: { PATH: `${path.join(work, 'bin')}:/usr/bin:/bin`, ...env },
      timeout: 30_000,
    });
    const recorded = existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : [];
    return { status: run.status, stderr: run.stderr, calls: recorded, ms: Date.now() - started };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

describe('npm run image without a registry', () => {
  const refused = `echo 'Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: connection refused' >&2; exit 1`;

  it('pulls the official base by default and, when the pull fails, stops naming --base local', () => {
    const run = runWithoutRegistry(refused, []);
    expect(run.calls).toContain('docker pull -q node:20-bookworm-slim');
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/could not pull the base node:20-bookworm-slim: .*connection refused/);
    expect(run.stderr).toContain('npm run image -- --base local (or INTERLOCK_BASE=local)');
    // No fallback: nothing is built, and the local base is not made behind the operator's back.
    expect(run.calls.filter((call) => call.startsWith('docker build '))).toEqual([]);
    expect(run.calls.filter((call) => /^ensure-docker\s*$/.test(call))).toEqual([]);
  });

  it('gives up on a pull that hangs after INTERLOCK_PULL_TIMEOUT seconds', () => {
    const run = runWithoutRegistry('exec sleep 25', [], { INTERLOCK_PULL_TIMEOUT: '1' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/no answer within 1 s \(INTERLOCK_PULL_TIMEOUT\)/);
    expect(run.stderr).toContain('--base local');
    expect(run.ms).toBeLessThan(20_000);
  });

  it('asks no registry for the local base', () => {
    const run = runWithoutRegistry(refused, ['--base', 'local']);
    expect(run.calls.filter((call) => call.startsWith('docker pull'))).toEqual([]);
    // The stand-in has no base, so ensure-docker.sh is asked to make it.
    expect(run.calls.filter((call) => /^ensure-docker\s*$/.test(call))).toHaveLength(1);
  });

  it('answers --help and wrong options before starting anything', () => {
    const help = runWithoutRegistry(refused, ['--help']);
    expect(help.status).toBe(0);
    expect(help.calls).toEqual([]);
    const wrong = runWithoutRegistry(refused, ['--platform', 'linux/arm64,linux/amd64']);
    expect(wrong.status).toBe(64);
    expect(wrong.stderr).toMatch(/add --push/);
    expect(wrong.calls).toEqual([]);
  });
});

/**
 * The buildx path, which this machine cannot run (no buildx, no registry): the real script from
 * the checkout, with stand-ins for `docker` (buildx present, the registry answering) and for
 * `npm pack` (esbuild's binary for the other platform); every other npm call is the real one.
 */
describe('npm run image --push with buildx (stand-ins)', () => {
  it('builds both platforms from a context directory holding the arm64 esbuild, and pushes one list', () => {
    const work = mkdtempSync(path.join(tmpdir(), 'interlock-image-buildx-'));
    try {
      mkdirSync(path.join(work, 'bin'));
      const calls = path.join(work, 'calls');
      const npm = execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim();
      writeFileSync(
        path.join(work, 'bin/docker'),
        `#!/bin/sh\necho "docker $*" >> '${calls}'\ncase "$1 $2" in\n  'info '*|'buildx version'|'buildx imagetools') exit 0 ;;\n` +
          `  'buildx build') for last; do :; done; ls "$last/image/Dockerfile" "$last/node_modules/@esbuild/linux-arm64/package.json" "$last/node_modules/netlink" >> '${calls}' 2>&1; exit 0 ;;\n  *) exit 1 ;;\nesac\n`,
      );
      writeFileSync(
        path.join(work, 'bin/npm'),
        `#!/bin/sh\nif [ "$1" = pack ]; then echo "npm $*" >> '${calls}'; mkdir -p p/package && echo '{}' > p/package/package.json && tar -czf esbuild-linux-arm64.tgz -C p package && rm -rf p; exit 0; fi\nexec '${npm}' "$@"\n`,
      );
      chmodSync(path.join(work, 'bin/docker'), 0o755);
      chmodSync(path.join(work, 'bin/npm'), 0o755);
      const run = spawnSync('/bin/bash', [path.join(root, 'scripts/image.sh'), '--push'], {
        encoding: 'utf8',
        env: { PATH: `${path.join(work, 'bin')}:/usr/bin:/bin`, IMAGE: 'registry.example/mesh-interlock:1.0.0' },
        timeout: 60_000,
      });
      const recorded = readFileSync(calls, 'utf8');
      expect(run.status, run.stderr).toBe(0);
      expect(recorded).toContain('docker buildx imagetools inspect node:20-bookworm-slim');
      expect(recorded).toMatch(/^npm pack -q @esbuild\/linux-arm64@\d+\.\d+\.\d+$/m);
      expect(recorded).toMatch(
        /^docker buildx build --platform linux\/amd64,linux\/arm64 --push -f \S+\/context\/image\/Dockerfile -t registry\.example\/mesh-interlock:1\.0\.0 --build-arg BASE_IMAGE=node:20-bookworm-slim /m,
      );
      expect(recorded).toMatch(/context\/node_modules\/@esbuild\/linux-arm64\/package\.json$/m);
      expect(recorded).not.toMatch(/No such file/);
      expect(run.stderr).toContain('pushed registry.example/mesh-interlock:1.0.0 for linux/amd64,linux/arm64');
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
