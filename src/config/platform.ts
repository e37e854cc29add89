/**
 * The cluster distribution, where it changes what Interlock prints. OpenShift's restricted-v2 SCC
 * assigns each container a uid from its namespace's range and refuses a fixed one outside it
 * (linkerd/linkerd2#11520); its nodes confine containers with SELinux.
 */
export const PLATFORMS = ['kubernetes', 'openshift'] as const;
export type Platform = (typeof PLATFORMS)[number];
