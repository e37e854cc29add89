import { isIP } from 'node:net';
import { parseCidr, type Cidr } from '../addr/cidr.js';
import { parseIp, type Family, type IpAddress } from '../addr/ip.js';
import { parsePortSet, type PortSet } from '../addr/port-set.js';
import { fail, ok, type Result } from '../reason/result.js';
import { closestName } from './closest-name.js';
import { formatDuration, parseDurationMs } from './duration.js';
import { quoted } from './echo-value.js';
import { imageReferenceProblem } from './image-reference.js';
import { FAILURE_EXIT_CODE_RANGE, isFailureCode, LOWEST_FAILURE_CODE, RESERVED_EXIT_CODES } from './exit-codes.js';
import { PLATFORMS, type Platform } from './platform.js';

/** A flag value parser: the failure's message is the problem alone (`expected 1-65535`). */
export type FlagParser<T> = (text: string) => Result<T, 'ConfigInvalid'>;

/** `all`, or an explicit list (empty meaning none). */
export type CidrSet = { readonly kind: 'all' } | { readonly kind: 'list'; readonly cidrs: readonly Cidr[] };
export type IdSet = { readonly kind: 'all' } | { readonly kind: 'list'; readonly ids: readonly number[] };

const problem = (text: string) => fail('ConfigInvalid', text);

function listItems(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/**
 * How a closed set is said when refused: `expected one of a, b` (the default), `expected a, b`
 * (`bare`) or `expected a or b` (`or`); `exact` takes the text untrimmed. The older tables word
 * theirs differently, and their refusals are kept as operators have seen them.
 */
export interface OneOfWording {
  readonly say?: 'one of' | 'bare' | 'or';
  readonly exact?: boolean;
}

/** One of a closed set; an empty value is an error, never a silent default. */
export function oneOf<T extends string>(allowed: readonly T[], wording: OneOfWording = {}): FlagParser<T> {
  const list = wording.say === 'or' ? allowed.join(' or ') : allowed.join(', ');
  const message = `expected ${wording.say === undefined || wording.say === 'one of' ? 'one of ' : ''}${list}`;
  return (text) => {
    const value = wording.exact ? text : text.trim();
    if ((allowed as readonly string[]).includes(value)) return ok(value as T);
    // A case slip (Istio, FAIL) is one edit per letter: compared in lower case, it is found.
    const lower = allowed.map((choice) => choice.toLowerCase());
    const guess = value === '' ? undefined : closestName(value.toLowerCase(), lower);
    return problem(guess === undefined ? message : `${message}; did you mean ${allowed[lower.indexOf(guess)]}?`);
  };
}

/** A release's MAJOR.MINOR (`1.24`, `1.24.3`, `v1.24.0`: the patch is read and dropped). */
export const parseMinorVersion: FlagParser<readonly [number, number]> = (text) => {
  const match = /^v?(\d{1,3})\.(\d{1,3})(?:\.\d{1,4})?$/.exec(text.trim());
  return match ? ok([Number(match[1]), Number(match[2])] as const) : problem('expected MAJOR.MINOR (1.24 or 1.24.3)');
};

/** --platform: kubernetes or openshift. */
export const parsePlatform: FlagParser<Platform> = oneOf(PLATFORMS, { say: 'or' });

/** Where a server listens. */
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/** HOST:PORT (`[::1]:8443`; no host: 0.0.0.0; port 0: the kernel picks); `example` is the flag's usual value. */
export function parseListenAddress(example: string): FlagParser<ListenAddress> {
  return (text) => {
    const match = /^(.*):(\d{1,5})$/.exec(text.trim());
    const port = match ? Number(match[2]) : NaN;
    return match && port <= 65535
      ? ok({ host: (match[1] ?? '').replace(/^\[|\]$/g, '') || '0.0.0.0', port })
      : problem(`expected HOST:PORT (${example}, 127.0.0.1:0)`);
  };
}

/** How a ListenAddress default reads in help: `0.0.0.0:8443`. */
export const showListenAddress = (address: ListenAddress): string => `${address.host}:${address.port}`;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A DNS-1123 label, refused in the flag's own words (the older tables word theirs differently). */
export function dnsLabel(refusal: string): FlagParser<string> {
  return (text) => (DNS_LABEL.test(text) ? ok(text) : problem(refusal));
}

/** A namespace or other DNS-1123 label. */
export const parseDnsLabel: FlagParser<string> = dnsLabel('expected a DNS-1123 label (lower case, digits, -)');

export const parsePort: FlagParser<number> = (text) => {
  const trimmed = text.trim();
  const port = /^\d{1,5}$/.test(trimmed) ? Number(trimmed) : NaN;
  return port >= 1 && port <= 65535 ? ok(port) : problem('expected a port from 1 to 65535');
};

export const parsePortOrZero: FlagParser<number> = (text) => (text.trim() === '0' ? ok(0) : parsePort(text));

export const parsePorts: FlagParser<PortSet> = (text) => {
  const parsed = parsePortSet(text);
  return parsed.ok ? ok(parsed.value) : problem(parsed.error);
};

/** A comma-separated list whose items each parse or name themselves as the fault. */
function listOf<T>(parseItem: (item: string) => T | undefined, expected: string): FlagParser<T[]> {
  return (text) => {
    const values: T[] = [];
    for (const item of listItems(text)) {
      const value = parseItem(item);
      if (value === undefined) return problem(`${quoted(item)} is not ${expected}`);
      values.push(value);
    }
    return ok(values);
  };
}

function parseId(item: string): number | undefined {
  return /^\d{1,10}$/.test(item) && Number(item) <= 0xfffffffe ? Number(item) : undefined;
}

export const parseIds: FlagParser<number[]> = listOf(parseId, 'a numeric uid/gid');
export const parseCidrs: FlagParser<Cidr[]> = listOf(parseCidr, 'an address or CIDR');
export const parseIps: FlagParser<IpAddress[]> = listOf(parseIp, 'an IP address');

export const parseIdSet: FlagParser<IdSet> = (text) => {
  if (text.trim() === '*') return ok({ kind: 'all' });
  const ids = parseIds(text);
  return ids.ok ? ok({ kind: 'list', ids: ids.value }) : ids;
};

export const parseCidrSet: FlagParser<CidrSet> = (text) => {
  if (text.trim() === '*') return ok({ kind: 'all' });
  const cidrs = parseCidrs(text);
  return cidrs.ok ? ok({ kind: 'list', cidrs: cidrs.value }) : cidrs;
};

export const parseLoopbackCidr: FlagParser<Cidr> = (text) => {
  const cidr = parseCidr(text);
  return cidr && cidr.family === 'ipv4' ? ok(cidr) : problem('expected an IPv4 CIDR such as 127.0.0.1/32');
};

export const parseInterfaces: FlagParser<string[]> = (text) => {
  const names = listItems(text);
  // IFNAMSIZ is 16 including the NUL; '/' and whitespace are never valid in an interface name.
  const bad = names.find((name) => name.length > 15 || /[\s/]/.test(name));
  return bad === undefined ? ok(names) : problem(`${quoted(bad)} is not an interface name`);
};

/** Switches read from an environment variable (`INTERLOCK_TPROXY=true`); argv switches take no value. */
export const parseBoolean: FlagParser<boolean> = (text) => {
  const value = text.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(value)) return ok(true);
  if (['false', '0', 'no', 'off'].includes(value)) return ok(false);
  return problem('expected true or false');
};

/** At most one address per family: `--probe-address 192.0.2.1,2001:db8::1`. */
export const parseAddressPerFamily: FlagParser<Partial<Record<Family, IpAddress>>> = (text) => {
  const addresses: Partial<Record<Family, IpAddress>> = {};
  const items = listItems(text);
  if (items.length === 0) return problem('expected one address per family, e.g. 192.0.2.1,2001:db8::1');
  for (const item of items) {
    const ip = parseIp(item);
    if (!ip) return problem(`${quoted(item)} is not an IP address`);
    if (addresses[ip.family]) return problem(`two ${ip.family} addresses given; one per family`);
    addresses[ip.family] = ip;
  }
  return ok(addresses);
};

/**
 * A duration within bounds. The bounds the message names are printed by formatDuration, so each
 * is a value this parser accepts (`to 1h` is never a refusal of `1h`).
 */
export function parseDuration(
  minMs: number,
  maxMs: number,
  examples = '500ms, 10s, 1m30s, 1h, 1d',
): FlagParser<number> {
  const expected = `expected a duration from ${formatDuration(minMs)} to ${formatDuration(maxMs)} (${examples})`;
  return (text) => {
    const ms = parseDurationMs(text);
    return ms === undefined || ms < minMs || ms > maxMs ? problem(expected) : ok(ms);
  };
}

/** A path: any text but the empty one (an empty path would mean "the current directory" to some calls). */
export const parsePath: FlagParser<string> = (text) => (text === '' ? problem('expected a path') : ok(text));

/**
 * Any text but a blank one, refused in the flag's own words (each table words it as operators
 * have seen it); `trimmed` gives the value without its surrounding spaces, `as given` untouched.
 */
export function parseNonBlank(refusal: string, keep: 'trimmed' | 'as given' = 'trimmed'): FlagParser<string> {
  return (text) => {
    const trimmed = text.trim();
    if (trimmed === '') return problem(refusal);
    return ok(keep === 'trimmed' ? trimmed : text);
  };
}

/** DIR[,DIR]: a search path in order; an empty item is a typo, never "the current directory". */
export const parseDirList: FlagParser<readonly string[]> = (text) => {
  const paths = text.split(',').map((item) => item.trim());
  return paths.some((item) => item === '') ? problem('expected a comma-separated list of directories') : ok(paths);
};

/** A CNI plugin's `type`: the file name the runtime looks up in its bin directories. */
export const parsePluginType: FlagParser<string> = (text) =>
  /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(text)
    ? ok(text)
    : problem('expected a plugin type (letters, digits, "_", ".", "-")');

/** A count of at most four digits, 0 meaning "all". */
export const parseCountOrAll: FlagParser<number> = (text) =>
  /^\d{1,4}$/.test(text.trim()) ? ok(Number(text.trim())) : problem('expected a whole number, 0 for all');

/** CIDR[,CIDR...] kept as written, each an IPv4 or IPv6 network with its prefix length. */
export const parseCidrTexts: FlagParser<string[]> = (text) => {
  const list = text.split(',').map((item) => item.trim());
  const bad = list.find((item) => {
    const [address = '', length, extra] = item.split('/');
    const family = isIP(address);
    const bits = Number(length);
    return !family || extra !== undefined || !/^\d{1,3}$/.test(length ?? '') || bits > (family === 4 ? 32 : 128);
  });
  return bad === undefined
    ? ok(list)
    : problem(`expected CIDR[,CIDR...] (10.0.0.0/24, fd00::/64), got ${JSON.stringify(bad)}`);
};

/** A switch given on the command line: its presence is the value. */
export const parseSwitch: FlagParser<boolean> = () => ok(true);

/** Any text, as given: a file name, `-` for standard input. */
export const parseAnyText: FlagParser<string> = (text) => ok(text);

/** A whole number from `min` to `max`. */
export function parseWholeNumber(min: number, max: number): FlagParser<number> {
  return (text) =>
    /^\d+$/.test(text) && Number(text) >= min && Number(text) <= max
      ? ok(Number(text))
      : problem(`expected a whole number from ${min} to ${max}`);
}

/** A CRI socket: unix:///PATH or an absolute path. */
export const parseCriEndpoint: FlagParser<string> = (text) =>
  /^(unix:\/\/)?\/[^\0\s]{1,4000}$/.test(text.trim())
    ? ok(text.trim())
    : problem(
        'expected unix:///PATH (containerd: unix:///run/containerd/containerd.sock; CRI-O: unix:///var/run/crio/crio.sock)',
      );

/** cni-check's runtime to ask: `auto` (its default sockets), `none` (ask nothing), or one socket. */
export const parseCriEndpointChoice: FlagParser<string> = (text) =>
  text === 'auto' || text === 'none'
    ? ok(text)
    : parseCriEndpoint(text).ok
      ? ok(text.trim())
      : problem('expected auto, none or unix:///PATH (containerd: unix:///run/containerd/containerd.sock)');

/** Where the node's root filesystem is seen: `/` on the node, `/host` in `kubectl debug node/...`. */
export const parseHostRoot: FlagParser<string> = (text) =>
  text === '/' || parseAbsoluteDir(text).ok ? ok(text) : problem('expected / or an absolute directory such as /host');

/** A host directory named to be mounted at the same path: absolute, plain (no `.`, `..` or `//`), no trailing `/`. */
export const parseAbsoluteDir: FlagParser<string> = (text) =>
  /^(\/[A-Za-z0-9._-]+)+$/.test(text) && !text.split('/').some((part) => part === '.' || part === '..')
    ? ok(text)
    : problem('expected an absolute directory such as /run/netns (letters, digits, ".", "_", "-" between slashes)');

/** NAME[,NAME]: namespaces, image repositories or digests, each a name without spaces. */
export const parseNameList: FlagParser<readonly string[]> = (text) => {
  const list = text.split(',').map((item) => item.trim());
  return list.every((item) => /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,254}$/.test(item))
    ? ok(list)
    : problem('expected a comma-separated list of names');
};

/** NAME[,NAME] of containers: empty items left out. */
export const parseContainerNames: FlagParser<string[]> = (text) => ok(listItems(text));

/** Names of one kind of object, DNS-1123 subdomains (dots allowed), comma-separated. */
function subdomainNames(kind: string): FlagParser<string[]> {
  return (value) => {
    const names = value.split(',').map((name) => name.trim());
    return names.every((name) => /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name))
      ? ok(names)
      : problem(`expected ${kind} names (DNS-1123 subdomains), comma-separated`);
  };
}

/** ServiceAccount names are DNS-1123 subdomains: dots allowed. */
export const parseServiceAccounts: FlagParser<string[]> = subdomainNames('ServiceAccount');

/** Secret names (image pull secrets) are DNS-1123 subdomains too. */
export const parseSecretNames: FlagParser<string[]> = subdomainNames('Secret');

/** A switch read from the command line only: any value from the environment is refused. */
export const parseArgvOnly: FlagParser<boolean> = () => problem('is read from the command line only');

/** A namespace name (a DNS-1123 label). */
export const parseNamespaceName: FlagParser<string> = dnsLabel('expected a namespace name (DNS-1123 label)');

/** A byte count from `min` to `max`, in at most nine digits. */
export function parseByteCount(min: number, max: number): FlagParser<number> {
  return (text) =>
    /^\d{1,9}$/.test(text) && Number(text) >= min && Number(text) <= max
      ? ok(Number(text))
      : problem(`expected a byte count from ${min} to ${max}`);
}

/** A taint the kubelet registers a node with, as named to remove it: `KEY` or `KEY:EFFECT` (no value). */
export interface TaintMatch {
  readonly key: string;
  readonly effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;
// A qualified name as the API server takes a taint key: an optional DNS-subdomain prefix and a name.
const TAINT_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** KEY[:EFFECT]: the taint's key as `--register-with-taints` wrote it, without its `=value`. */
export const parseTaintMatch: FlagParser<TaintMatch> = (text) => {
  const [key = '', effect, extra] = text.trim().split(':');
  const refusal = 'expected a taint key, optionally with its effect (readiness.k8s.io/mesh-not-ready[:NoSchedule])';
  if (extra !== undefined || key.length > 316 || !TAINT_KEY.test(key)) return problem(refusal);
  if (effect === undefined) return ok({ key });
  return (TAINT_EFFECTS as readonly string[]).includes(effect)
    ? ok({ key, effect: effect as TaintMatch['effect'] })
    : problem(`expected the effect NoSchedule, PreferNoSchedule or NoExecute after the key`);
};

/** `--failure-exit-code`: 2-255, never a reserved code. */
export const parseFailureExitCode: FlagParser<number> = (text) => {
  const trimmed = text.trim();
  const code = /^\d{1,3}$/.test(trimmed) ? Number(trimmed) : NaN;
  if (isFailureCode(code)) return ok(code);
  return problem(
    `expected ${FAILURE_EXIT_CODE_RANGE} except ${RESERVED_EXIT_CODES.filter((reserved) => reserved > LOWEST_FAILURE_CODE).join(', ')} (reserved: configuration error, bad input, internal error, output error, signals)`,
  );
};

/** `--image`: a reference a registry client takes (config/image-reference.ts), kept as written. */
export const parseImageReference: FlagParser<string> = (text) => {
  const refusal = imageReferenceProblem(text);
  return refusal === undefined ? ok(text) : problem(refusal);
};
