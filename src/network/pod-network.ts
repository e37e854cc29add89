import type { Cidr } from '../addr/cidr.js';
import type { Family, IpAddress } from '../addr/ip.js';

/** The pod's network as rtnetlink reports it, reduced to what interception depends on. */
export interface PodNetwork {
  readonly links: readonly LinkInfo[];
  readonly addresses: readonly AddressInfo[];
  readonly routes: readonly RouteInfo[];
  /** The policy-routing rules (`ip rule`), both families; undefined when they were not read. */
  readonly rules?: readonly PolicyRule[];
}

/** One `ip rule`: which packets (by firewall mark) look up which table. */
export interface PolicyRule {
  readonly family: Family;
  readonly priority: number;
  /** The table looked up; undefined when the rule's action is not a lookup (blackhole, goto...). */
  readonly table: number | undefined;
  readonly fwmark: number | undefined;
  readonly fwmask: number | undefined;
  /** `not` rules match every packet the selector does not. */
  readonly invert: boolean;
}

export interface LinkInfo {
  readonly index: number;
  readonly name: string;
  readonly up: boolean;
  readonly loopback: boolean;
}

export type AddressScope = 'global' | 'site' | 'link' | 'host' | 'nowhere';

export interface AddressInfo {
  readonly linkIndex: number;
  readonly address: IpAddress;
  readonly prefix: number;
  readonly scope: AddressScope;
  /** IPv6 duplicate address detection not finished, or failed: the address cannot be used yet. */
  readonly usable: boolean;
  /** Still in duplicate address detection: it may become usable within the deadline. */
  readonly tentative: boolean;
}

export type RouteType =
  | 'unicast'
  | 'local'
  | 'broadcast'
  | 'anycast'
  | 'multicast'
  | 'blackhole'
  | 'unreachable'
  | 'prohibit'
  | 'throw'
  | 'other';

export interface RouteInfo {
  readonly family: Family;
  readonly table: number;
  readonly type: RouteType;
  readonly destination: Cidr;
  readonly gateway: IpAddress | undefined;
  readonly outputLinkIndex: number | undefined;
}

export const LOCAL_TABLE = 255;
