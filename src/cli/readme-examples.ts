import type { Mesh } from '../config/interception.js';
import { runManifest } from './commands/manifest/run.js';
import { VERSION } from './version.js';

/** The image the README's examples name: a pushed image, as an operator passes it. */
const EXAMPLE_IMAGE = `registry.example.com/mesh-interlock:${VERSION}`;

/**
 * The README's init-container example of a mesh: exactly what `interlock manifest` prints for it,
 * so the page never shows a container the command does not print (`npm run docs` writes it).
 */
export async function manifestExample(mesh: Mesh): Promise<string> {
  const argv = ['--mesh', mesh, '--image', EXAMPLE_IMAGE];
  const run = await runManifest(argv, {});
  if (run.exitCode !== 0) throw new Error(`interlock manifest ${argv.join(' ')} failed: ${run.stderr}`);
  return `\`\`\`yaml\n# interlock manifest ${argv.join(' ')}\n${run.stdout.trimEnd()}\n\`\`\``;
}
