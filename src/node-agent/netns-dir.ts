/** Where containerd and CRI-O mount pods' network namespaces by default; /var/run/netns names it too. */
export const DEFAULT_NETNS_DIR = '/run/netns';

/** Where the agent sees the pods' namespaces of `--netns-dir`: the default also as /var/run/netns. */
export const netnsMountPaths = (netnsDir: string): readonly string[] =>
  netnsDir === DEFAULT_NETNS_DIR ? [DEFAULT_NETNS_DIR, '/var/run/netns'] : [netnsDir];
