/** See image-plan.mjs: the build plan of `npm run image` (base, platforms, command line). */
export declare const OFFICIAL_BASE: string;
export declare const PUSH_PLATFORMS: readonly string[];
export declare const USAGE: string;
export declare class ImagePlanError extends Error {}

export interface ImageOptions {
  readonly base: string;
  readonly platforms: readonly string[] | undefined;
  readonly push: boolean;
  readonly help: boolean;
}

export interface ImageFacts {
  readonly image: string;
  readonly hostPlatform: string;
  readonly buildx: boolean;
  readonly localBase: string;
  readonly context: string;
  readonly buildArgs: readonly (readonly [string, string])[];
  readonly pullTimeout: number;
}

export interface ImagePlan {
  readonly base: string;
  readonly kind: 'official' | 'local' | 'custom';
  readonly platforms: readonly string[];
  readonly builder: 'docker' | 'buildx';
  readonly env: Readonly<Record<string, string>>;
  readonly probe: readonly string[];
  readonly pullTimeout: number;
  readonly build: readonly string[];
  readonly push: readonly string[];
  readonly esbuild: readonly string[];
}

export declare function parseImageArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ImageOptions;
export declare function imagePlan(options: ImageOptions, facts: ImageFacts): ImagePlan;
export declare function pullFailedMessage(base: string, seconds: number, detail: string, timedOut: boolean): string;
