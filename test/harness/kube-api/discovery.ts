/**
 * The discovery documents kubectl reads before any request: /version, /api (APIVersions), /apis
 * (APIGroupList, plain JSON: kubectl falls back to it from aggregated discovery), /api/v1
 * (APIResourceList). Only what the stand-in serves is listed, so kubectl never asks for more.
 */
const verbs = (...list: string[]): string[] => list;

export const VERSION_INFO = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-interlock-standin',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23.0',
  compiler: 'gc',
  platform: 'linux/amd64',
};

export function apiVersions(serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

export const API_GROUP_LIST = { kind: 'APIGroupList', apiVersion: 'v1', groups: [] };

export const CORE_V1_RESOURCES = {
  kind: 'APIResourceList',
  groupVersion: 'v1',
  resources: [
    {
      name: 'pods',
      singularName: 'pod',
      namespaced: true,
      kind: 'Pod',
      shortNames: ['po'],
      categories: ['all'],
      verbs: verbs('create', 'delete', 'get', 'list', 'patch', 'update', 'watch'),
    },
    { name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: verbs('get', 'patch', 'update') },
    {
      name: 'events',
      singularName: 'event',
      namespaced: true,
      kind: 'Event',
      shortNames: ['ev'],
      verbs: verbs('create', 'delete', 'get', 'list', 'patch', 'update', 'watch'),
    },
    {
      name: 'nodes',
      singularName: 'node',
      namespaced: false,
      kind: 'Node',
      shortNames: ['no'],
      verbs: verbs('create', 'delete', 'get', 'list', 'patch', 'update', 'watch'),
    },
  ],
};
