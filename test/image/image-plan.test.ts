import { describe, expect, it } from 'vitest';
import {
  ImagePlanError,
  OFFICIAL_BASE,
  PUSH_PLATFORMS,
  USAGE,
  imagePlan,
  parseImageArgs,
  pullFailedMessage,
  type ImageFacts,
} from '../../scripts/image-plan.mjs';

const facts: ImageFacts = {
  image: 'registry.example/mesh-interlock:1.2.3',
  hostPlatform: 'linux/amd64',
  buildx: true,
  localBase: 'mesh-interlock-base:local',
  context: '/tmp/interlock-image.x/context',
  buildArgs: [['VERSION', '1.2.3']],
  pullTimeout: 180,
};

function plan(argv: string[], env: Record<string, string> = {}, overrides: Partial<ImageFacts> = {}) {
  return imagePlan(parseImageArgs(argv, env), { ...facts, ...overrides });
}

describe('npm run image: the build plan', () => {
  it('builds on the official base by default, pulling it, for this machine only', () => {
    const result = plan([]);
    expect(result.base).toBe(OFFICIAL_BASE);
    expect(result.kind).toBe('official');
    expect(result.platforms).toEqual(['linux/amd64']);
    expect(result.probe).toEqual(['docker', 'pull', '-q', OFFICIAL_BASE]);
    expect(result.build).toEqual([
      'docker',
      'build',
      '-f',
      'image/Dockerfile',
      '-t',
      facts.image,
      '--build-arg',
      `BASE_IMAGE=${OFFICIAL_BASE}`,
      '--build-arg',
      'VERSION=1.2.3',
      '-',
    ]);
    expect(result.env).toEqual({ DOCKER_BUILDKIT: '0' });
    expect(result.push).toEqual([]);
  });

  it('builds on the local base only when asked, by flag or INTERLOCK_BASE, and never asks a registry', () => {
    for (const result of [plan(['--base', 'local']), plan(['--base=local']), plan([], { INTERLOCK_BASE: 'local' })]) {
      expect(result.base).toBe('mesh-interlock-base:local');
      expect(result.kind).toBe('local');
      expect(result.probe).toEqual([]);
      expect(result.build).toContain('BASE_IMAGE=mesh-interlock-base:local');
    }
  });

  it('takes another base by reference (and the older INTERLOCK_BASE_IMAGE), asking the registry for it', () => {
    expect(plan(['--base', 'mirror.example/node:20-bookworm']).probe).toEqual([
      'docker',
      'pull',
      '-q',
      'mirror.example/node:20-bookworm',
    ]);
    expect(plan([], { INTERLOCK_BASE_IMAGE: 'mirror.example/node:20' }).base).toBe('mirror.example/node:20');
    expect(plan(['--base', 'official'], { INTERLOCK_BASE: 'local' }).kind).toBe('official');
  });

  it('pushes both platforms as one manifest list with buildx', () => {
    const result = plan(['--push']);
    expect(result.platforms).toEqual(PUSH_PLATFORMS);
    expect(result.builder).toBe('buildx');
    expect(result.probe).toEqual(['docker', 'buildx', 'imagetools', 'inspect', OFFICIAL_BASE]);
    expect(result.build.slice(0, 6)).toEqual([
      'docker',
      'buildx',
      'build',
      '--platform',
      'linux/amd64,linux/arm64',
      '--push',
    ]);
    expect(result.build).toContain(`${facts.context}/image/Dockerfile`);
    expect(result.build.at(-1)).toBe(facts.context);
    expect(result.push).toEqual([]);
    expect(result.env).toEqual({});
    expect(result.esbuild).toEqual(['@esbuild/linux-arm64']);
  });

  it('says so when buildx is absent, instead of pushing one platform quietly', () => {
    expect(() => plan(['--push'], {}, { buildx: false })).toThrow(ImagePlanError);
    expect(() => plan(['--push'], {}, { buildx: false })).toThrow(
      /docker buildx is not available.*--platform linux\/amd64 --push/,
    );
    expect(() => plan(['--platform', 'linux/arm64'], {}, { buildx: false })).toThrow(
      /buildx is not available.*linux\/arm64/,
    );
  });

  it("pushes this machine's platform with the classic builder and docker push", () => {
    const result = plan(['--platform', 'linux/amd64', '--push'], {}, { buildx: false });
    expect(result.builder).toBe('docker');
    expect(result.push).toEqual(['docker', 'push', facts.image]);
  });

  it('loads one other platform with buildx, with that platform’s esbuild', () => {
    const result = plan(['--platform=linux/arm64'], {}, { hostPlatform: 'linux/amd64' });
    expect(result.build.slice(0, 6)).toEqual(['docker', 'buildx', 'build', '--platform', 'linux/arm64', '--load']);
    expect(result.esbuild).toEqual(['@esbuild/linux-arm64']);
    const fromArm = plan(['--platform=linux/amd64'], {}, { hostPlatform: 'linux/arm64' });
    expect(fromArm.esbuild).toEqual(['@esbuild/linux-x64']);
  });

  it('refuses what cannot work, naming the way out', () => {
    expect(() => plan(['--platform', 'linux/amd64,linux/arm64'])).toThrow(/add --push/);
    expect(() => plan(['--base', 'local', '--platform', 'linux/arm64'])).toThrow(
      /--base local .* cannot build linux\/arm64/,
    );
    expect(() => plan(['--platform', 'linux/s390x'])).toThrow(/expected linux\/amd64, linux\/arm64/);
    expect(() => plan(['--base'])).toThrow(/--base needs a value/);
    expect(() => plan(['--pull'])).toThrow(/unknown option --pull/);
  });

  it('keeps the local base on this machine’s platform with --push (no buildx needed)', () => {
    const result = plan(['--base', 'local', '--push'], {}, { buildx: false });
    expect(result.platforms).toEqual(['linux/amd64']);
    expect(result.push).toEqual(['docker', 'push', facts.image]);
  });
});

describe('npm run image: what a failed pull says', () => {
  it('names the option that builds without a registry, and the cause', () => {
    const refused = pullFailedMessage(
      OFFICIAL_BASE,
      180,
      'Error response from daemon: dial tcp: connection refused\n',
      false,
    );
    expect(refused).toMatch(/could not pull the base node:20-bookworm-slim: Error response .*connection refused\./);
    expect(refused).toContain('npm run image -- --base local');
    expect(refused).toContain('INTERLOCK_BASE=local');
    expect(pullFailedMessage(OFFICIAL_BASE, 7, '', true)).toMatch(/no answer within 7 s \(INTERLOCK_PULL_TIMEOUT\)/);
  });

  it('documents every option within 80 columns', () => {
    for (const option of ['--base official', '--base local', '--base REF', '--platform', '--push', 'INTERLOCK_BASE'])
      expect(USAGE).toContain(option);
    expect(USAGE.split('\n').filter((line) => line.length > 80)).toEqual([]);
  });
});
