import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Message } from '../cri-client.js';
import type { ContainerSpec, PodObject } from './pod-spec.js';

/** A map as the kubelet writes it to a downward API file (fieldpath.FormatMap): sorted `key="value"` lines. */
function formatMap(map: Readonly<Record<string, string>> | undefined): string {
  return Object.keys(map ?? {})
    .sort()
    .map((key) => `${key}=${JSON.stringify(map?.[key] ?? '')}`)
    .join('\n');
}

function fieldText(pod: PodObject, fieldPath: string): string {
  if (fieldPath === 'metadata.annotations') return formatMap(pod.metadata.annotations);
  if (fieldPath === 'metadata.labels') return formatMap(pod.metadata.labels);
  if (fieldPath === 'metadata.name') return pod.metadata.name;
  if (fieldPath === 'metadata.namespace') return pod.metadata.namespace;
  if (fieldPath === 'metadata.uid') return pod.metadata.uid;
  throw new Error(`the harness does not implement the downward API field ${fieldPath}`);
}

/**
 * The CRI mounts for a container's volumeMounts, as the kubelet makes them: each downward API
 * volume written under the pod's directory, bind-mounted read-only; an emptyDir one directory
 * under it that every container of the pod shares, mode 0777 as the kubelet makes it (a
 * container running as another uid writes to it). A mount naming a volume the pod does not
 * declare fails the container's creation, as the kubelet's CreateContainerConfigError.
 */
export async function volumeMounts(pod: PodObject, container: ContainerSpec, podDir: string): Promise<Message[]> {
  const mounts: Message[] = [];
  for (const mount of container.volumeMounts ?? []) {
    const volume = pod.spec.volumes?.find((candidate) => candidate.name === mount.name);
    const dir = join(podDir, 'volumes', mount.name);
    if (volume?.emptyDir) {
      await mkdir(dir, { recursive: true });
      await chmod(dir, 0o777);
      mounts.push({ container_path: mount.mountPath, host_path: dir, readonly: mount.readOnly ?? false });
      continue;
    }
    if (!volume?.downwardAPI) throw new Error(`container ${container.name}: volume "${mount.name}" not found`);
    await mkdir(dir, { recursive: true });
    await chmod(dir, 0o755);
    for (const item of volume.downwardAPI.items) {
      const file = join(dir, item.path);
      await writeFile(file, fieldText(pod, item.fieldRef.fieldPath));
      await chmod(file, 0o644);
    }
    mounts.push({ container_path: mount.mountPath, host_path: dir, readonly: mount.readOnly ?? false });
  }
  return mounts;
}
