import { DEFAULT_IMAGE } from '../../inject/validator-container.js';

/**
 * Said on stderr whenever a printed or patched container gets the default image: nothing
 * publishes it, so a pod that pulls it fails with ImagePullBackOff, far from this command.
 */
export function defaultImageWarning(command: 'manifest' | 'inject' | 'webhook'): string {
  return `interlock ${command}: warning: no --image given, so the containers use ${DEFAULT_IMAGE}, which no registry publishes (pods pulling it fail with ImagePullBackOff): build it with npm run image, push it, and pass --image REGISTRY/mesh-interlock:TAG\n`;
}
