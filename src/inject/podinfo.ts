/**
 * The pod's annotations and labels as downward-API files, so validate applies the mesh's
 * exclusion annotations exactly as its CNI plugin reads them (and only then spreads its probe):
 * inject and manifest name them in validate's `--pod-annotations` and `--pod-labels`, the webhook
 * through their environment variables (so the mesh's args stay as the mesh wrote them). A volume
 * of Interlock's own: Linkerd's pods have none, Istio's may change.
 */
export const PODINFO = {
  volume: 'interlock-podinfo',
  mountPath: '/etc/interlock/podinfo',
  annotationsEnv: 'INTERLOCK_POD_ANNOTATIONS',
  labelsEnv: 'INTERLOCK_POD_LABELS',
} as const;

export function podinfoVolume(): Record<string, unknown> {
  return {
    name: PODINFO.volume,
    downwardAPI: {
      items: [
        { path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } },
        { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
      ],
    },
  };
}

export function podinfoMount(): Record<string, unknown> {
  return { name: PODINFO.volume, mountPath: PODINFO.mountPath, readOnly: true };
}

export function podinfoEnv(): Record<string, unknown>[] {
  return [
    { name: PODINFO.annotationsEnv, value: `${PODINFO.mountPath}/annotations` },
    { name: PODINFO.labelsEnv, value: `${PODINFO.mountPath}/labels` },
  ];
}
