/**
 * The repository `--trusted-image` names for an image reference: the reference without its tag
 * or digest (`registry:5000/mesh-interlock:1.0@sha256:…` is `registry:5000/mesh-interlock`).
 */
export function trustedRepository(image: string): string {
  return (image.split('@')[0] ?? image).replace(/:[^/:]*$/, '');
}
