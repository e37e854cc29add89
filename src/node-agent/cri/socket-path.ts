import { fail, ok, type Result } from '../../reason/result.js';

/** `unix:///run/containerd/containerd.sock` or a bare absolute path: the socket's path. */
export function socketPathOf(endpoint: string): Result<string, 'ConfigInvalid'> {
  const path = endpoint.startsWith('unix://') ? endpoint.slice('unix://'.length) : endpoint;
  return /^\/[^\0\s]{1,4000}$/.test(path)
    ? ok(path)
    : fail(
        'ConfigInvalid',
        'expected unix:///PATH (unix:///run/containerd/containerd.sock, unix:///var/run/crio/crio.sock)',
      );
}
