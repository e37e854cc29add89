/** See corpus-readme.mjs. */
export interface CorpusManifest {
  readonly cases: readonly {
    readonly dir: string;
    readonly mesh: string;
    readonly writer: string;
    readonly source: string;
    readonly config: Readonly<Record<string, unknown>>;
  }[];
}
export declare const BEGIN: string;
export declare const END: string;
export declare function casesTable(manifest: CorpusManifest): string;
export declare function renderReadme(readme: string, manifest: CorpusManifest): string;
