/** See stage-runtime.mjs: stages dist/ and the production node_modules world-readable; returns the directory. */
export declare function stageRuntime(): string;
