/**
 * Everything needed to talk to one API server, as the official clients resolve it from a
 * kubeconfig or the in-cluster service account. Credentials are bytes already read, so a request
 * never touches the filesystem.
 */
export interface ClusterAccess {
  /** `https://10.96.0.1:443`, no trailing slash. */
  readonly server: string;
  readonly caData?: Buffer;
  readonly token?: string;
  readonly clientCertData?: Buffer;
  readonly clientKeyData?: Buffer;
  readonly insecureSkipTlsVerify: boolean;
  /** SNI and certificate name to check instead of the server's host (kubeconfig `tls-server-name`). */
  readonly tlsServerName?: string;
  /** The context's (or the service account's) namespace, when one is given. */
  readonly namespace?: string;
  /** Where this came from, for log lines: `kubeconfig /path (context x)` or `in-cluster`. */
  readonly origin: string;
}
