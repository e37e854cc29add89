/** Where containerd and CRI-O mount pods' network namespaces by default; /var/run/netns names it too. */
export const DEFAULT_NETNS_DIR = '/run/netns';
