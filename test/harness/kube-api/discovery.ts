/**
 * The discovery documents kubectl reads before any request: /version, /api (APIVersions), /apis
 * (APIGroupList, plain JSON: kubectl falls back to it from aggregated discovery), /api/v1
 * (APIResourceList). Only what the stand-in serves is listed, so kubectl never asks for more.
 */
import { groupVersions, RESOURCE_TABLE, type ResourceInfo } from './resources.js';

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

/** APIGroupList: every group of the resource table, each with its one version preferred. */
export const API_GROUP_LIST = {
  kind: 'APIGroupList',
  apiVersion: 'v1',
  groups: groupVersions()
    .filter(({ group }) => group !== '')
    .map(({ group, version }) => {
      const groupVersion = { groupVersion: `${group}/${version}`, version };
      return { name: group, versions: [groupVersion], preferredVersion: groupVersion };
    }),
};

const ALL_VERBS = verbs('create', 'delete', 'get', 'list', 'patch', 'update', 'watch');

/** APIResourceList of one group version, from the resource table (pods also have their status). */
export function resourceList(group: string, version: string): object | undefined {
  const infos = RESOURCE_TABLE.filter((info) => info.group === group && info.version === version);
  if (infos.length === 0) return undefined;
  const resources = infos.flatMap((info: ResourceInfo) => [
    {
      name: info.name,
      singularName: info.singular,
      namespaced: info.namespaced,
      kind: info.kind,
      verbs: ALL_VERBS,
      ...(info.shortNames ? { shortNames: info.shortNames } : {}),
      ...(['pods', 'deployments', 'daemonsets', 'statefulsets', 'jobs', 'cronjobs', 'services'].includes(info.name)
        ? { categories: ['all'] }
        : {}),
    },
    ...(info.name === 'pods'
      ? [
          {
            name: 'pods/status',
            singularName: '',
            namespaced: true,
            kind: 'Pod',
            verbs: verbs('get', 'patch', 'update'),
          },
        ]
      : []),
  ]);
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources,
  };
}

export const CORE_V1_RESOURCES = resourceList('', 'v1')!;
