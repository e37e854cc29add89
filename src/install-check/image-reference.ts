/**
 * An image reference's repository, as the kubelet resolves it: `mesh-interlock:dev` and
 * `docker.io/library/mesh-interlock:dev` are one repository; the tag and the digest are not part
 * of it (a registry host's port is).
 */
export function imageRepository(image: string): string {
  const withoutDigest = image.split('@')[0] ?? image;
  const slash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  const name = colon > slash ? withoutDigest.slice(0, colon) : withoutDigest;
  const parts = name.split('/');
  const first = parts[0] ?? '';
  const hasHost = parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (hasHost) return first === 'index.docker.io' ? `docker.io/${parts.slice(1).join('/')}` : name;
  return parts.length === 1 ? `docker.io/library/${name}` : `docker.io/${name}`;
}

/** The same image, however it is spelled (`nginx:1` and `docker.io/library/nginx:1`). */
export function sameImage(a: string, b: string): boolean {
  const tail = (image: string) => image.slice(image.split('@')[0]!.lastIndexOf('/') + 1).replace(/^[^:@]*/, '');
  return imageRepository(a) === imageRepository(b) && tail(a) === tail(b);
}
