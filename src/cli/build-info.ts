/**
 * The commit and the time this build was made. The source says `unknown`; the build writes the
 * real values into the compiled module (scripts/stamp-build.mjs) and into the start-up snapshot
 * (scripts/build-snapshot.mjs), both from scripts/build-info.mjs.
 */
export const BUILD_INFO: { readonly commit: string; readonly date: string } = { commit: 'unknown', date: 'unknown' };
