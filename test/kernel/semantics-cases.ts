import { TPROXY_MARK, OTHER_SERVICE, type KernelCase } from './semantics-harness.js';

/**
 * Every target, statement and match the parsers accept, each installed with the real tools in
 * front of (or instead of) a REDIRECT, with the connection the kernel then delivers. `kernel` is
 * the documented semantics (docs/rules.md, "What each rule does to NAT"); the test proves it on a
 * real kernel and checks the model gives the same answer or, where marked, declines (`unknown`).
 */
const BUILTIN: Readonly<Record<string, readonly string[]>> = {
  raw: ['PREROUTING', 'OUTPUT'],
  mangle: ['PREROUTING', 'OUTPUT'],
  nat: ['PREROUTING', 'OUTPUT'],
  filter: ['OUTPUT'],
};

function table(name: string, rules: readonly string[], userChains: readonly string[] = []): string {
  const chains = [...(BUILTIN[name] ?? []).map((c) => `:${c} ACCEPT [0:0]`), ...userChains.map((c) => `:${c} - [0:0]`)];
  return [`*${name}`, ...chains, ...rules, 'COMMIT', ''].join('\n');
}

/**
 * The mesh's capture: outbound and inbound TCP to port 80 go to 15001 and 15006, after `first`. Only
 * port 80: an untracked connection's replies meet conntrack as new connections, and a capture of
 * every port would take them too.
 */
function nat(first: readonly string[] = [], userChains: readonly string[] = []): string {
  return table(
    'nat',
    [
      ...first,
      '-A OUTPUT -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 15001',
      '-A PREROUTING -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 15006',
    ],
    userChains,
  );
}

const REDIRECTED_OUT = 'pod:15001';
const REDIRECTED_IN = 'pod:15006';
const ORIGINAL_OUT = 'sink:80';
const ORIGINAL_IN = 'pod:80';

type CaseSpec = Omit<KernelCase, 'backend' | 'direction' | 'model'> & Partial<Pick<KernelCase, 'model' | 'direction'>>;

function ipt(spec: CaseSpec): KernelCase {
  return { backend: 'iptables-nft', direction: 'out', model: 'exact', ...spec };
}

const IPTABLES_TARGETS: KernelCase[] = [
  ipt({ audits: '-j REDIRECT --to-ports P', rules: nat(), kernel: REDIRECTED_OUT }),
  ipt({ audits: '-j REDIRECT', rules: nat(['-A OUTPUT -p tcp -j REDIRECT']), kernel: 'pod:80' }),
  ipt({
    audits: '-j DNAT --to-destination ADDR:PORT',
    rules: nat([`-A OUTPUT -p tcp -j DNAT --to-destination ${OTHER_SERVICE}:8081`]),
    kernel: 'sink:8081',
  }),
  ipt({ audits: '-j ACCEPT', rules: nat(['-A OUTPUT -j ACCEPT']), kernel: ORIGINAL_OUT }),
  ipt({ audits: '-j RETURN', rules: nat(['-A OUTPUT -j RETURN']), kernel: ORIGINAL_OUT }),
  ipt({ audits: '-j DROP', rules: nat() + table('filter', ['-A OUTPUT -p tcp -j DROP']), kernel: 'dropped' }),
  ipt({ audits: '-j REJECT', rules: nat() + table('filter', ['-A OUTPUT -p tcp -j REJECT']), kernel: 'dropped' }),
  ipt({ audits: '-j CHAIN', rules: nat(['-A OUTPUT -j MESH', '-A MESH -j ACCEPT'], ['MESH']), kernel: ORIGINAL_OUT }),
  ipt({
    audits: '-g CHAIN',
    rules: nat(['-A OUTPUT -g MESH', '-A MESH -j RETURN'], ['MESH']),
    kernel: ORIGINAL_OUT,
  }),
  ipt({ audits: 'no target', rules: nat(['-A OUTPUT -p tcp']), kernel: REDIRECTED_OUT }),
  ipt({ audits: '-j LOG', rules: nat(['-A OUTPUT -j LOG --log-prefix "audit "']), kernel: REDIRECTED_OUT }),
  ipt({ audits: '-j NFLOG', rules: nat(['-A OUTPUT -j NFLOG --nflog-group 2']), kernel: REDIRECTED_OUT }),
  ipt({ audits: '-j TRACE', rules: table('raw', ['-A OUTPUT -p tcp -j TRACE']) + nat(), kernel: REDIRECTED_OUT }),
  ipt({ audits: '-j CT --notrack', rules: table('raw', ['-A OUTPUT -j CT --notrack']) + nat(), kernel: ORIGINAL_OUT }),
  ipt({ audits: '-j NOTRACK', rules: table('raw', ['-A OUTPUT -p tcp -j NOTRACK']) + nat(), kernel: ORIGINAL_OUT }),
  ipt({
    audits: '-j NOTRACK',
    direction: 'in',
    rules: table('raw', ['-A PREROUTING -p tcp -j NOTRACK']) + nat(),
    kernel: ORIGINAL_IN,
  }),
  ipt({ audits: '-j CT --zone N', rules: table('raw', ['-A OUTPUT -j CT --zone 7']) + nat(), kernel: REDIRECTED_OUT }),
  ipt({
    audits: '-j CT --zone N',
    direction: 'in',
    // Both directions in the zone: replies looked up in another zone are not un-NATed.
    rules: table('raw', ['-A PREROUTING -j CT --zone 7', '-A OUTPUT -j CT --zone 7']) + nat(),
    kernel: REDIRECTED_IN,
  }),
  ipt({
    audits: '-j CT --helper NAME',
    rules: table('raw', ['-A OUTPUT -p tcp -j CT --helper ftp']) + nat(),
    kernel: REDIRECTED_OUT,
  }),
  ipt({
    audits: '-j CT --ctevents LIST',
    rules: table('raw', ['-A OUTPUT -j CT --ctevents new,destroy']) + nat(),
    kernel: REDIRECTED_OUT,
  }),
  ipt({
    audits: '-j CT (any other option)',
    rules: table('raw', ['-A OUTPUT -j CT --zone-orig 7']) + nat(),
    kernel: REDIRECTED_OUT,
    model: 'unknown',
  }),
  ipt({
    audits: '-j MARK --set-xmark V/M',
    rules:
      table('mangle', ['-A OUTPUT -j MARK --set-xmark 0x1/0xffffffff']) +
      nat(['-A OUTPUT -m mark --mark 0x1 -j RETURN']),
    kernel: ORIGINAL_OUT,
  }),
  ipt({
    audits: '-j CONNMARK --save-mark',
    rules:
      table('mangle', ['-A OUTPUT -j MARK --set-xmark 0x1/0xffffffff', '-A OUTPUT -j CONNMARK --save-mark']) +
      nat(['-A OUTPUT -m connmark --mark 0x1 -j RETURN']),
    kernel: ORIGINAL_OUT,
  }),
  ipt({
    audits: '-j CONNMARK --restore-mark',
    rules:
      table('mangle', [
        '-A OUTPUT -j MARK --set-xmark 0x1/0xffffffff',
        '-A OUTPUT -j CONNMARK --save-mark',
        '-A OUTPUT -j MARK --set-xmark 0x0/0xffffffff',
        '-A OUTPUT -j CONNMARK --restore-mark',
      ]) + nat(['-A OUTPUT -m mark --mark 0x1 -j RETURN']),
    kernel: ORIGINAL_OUT,
  }),
  ipt({
    audits: '-j TPROXY --on-port P',
    direction: 'in',
    rules:
      table('mangle', [
        `-A PREROUTING -p tcp -j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x${TPROXY_MARK.toString(16)}/0x${TPROXY_MARK.toString(16)}`,
      ]) + table('nat', []),
    kernel: REDIRECTED_IN,
  }),
  ipt({
    audits: '-j TPROXY --on-port P',
    direction: 'in',
    rules:
      table('raw', ['-A PREROUTING -p tcp -j NOTRACK']) +
      table('mangle', [
        `-A PREROUTING -p tcp -j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x${TPROXY_MARK.toString(16)}/0x${TPROXY_MARK.toString(16)}`,
      ]),
    kernel: REDIRECTED_IN,
    model: 'unknown',
  }),
  {
    audits: '-j CT --notrack',
    backend: 'iptables-legacy',
    direction: 'out',
    rules: table('raw', ['-A OUTPUT -j CT --notrack']) + nat(),
    kernel: ORIGINAL_OUT,
    model: 'exact',
  },
];

/** A match in front of a RETURN: it matched when the connection reaches its original destination. */
function returnIf(audits: string, match: string, matched: boolean, extra: Partial<KernelCase> = {}): KernelCase {
  const inbound = extra.direction === 'in';
  const chain = inbound ? 'PREROUTING' : 'OUTPUT';
  const kernel = matched ? (inbound ? ORIGINAL_IN : ORIGINAL_OUT) : inbound ? REDIRECTED_IN : REDIRECTED_OUT;
  return ipt({ audits, rules: nat([`-A ${chain} ${match} -j RETURN`]), kernel, ...extra });
}

const IPTABLES_MATCHES: KernelCase[] = [
  returnIf('-p PROTO', '-p tcp', true),
  returnIf('-p PROTO', '-p udp', false),
  returnIf('-d CIDR', '-d 10.96.0.0/12', true),
  returnIf('-d CIDR', '! -d 10.96.0.0/12', false),
  returnIf('-s CIDR', '-s 10.0.0.0/8', true),
  returnIf('-o IFACE', '-o eth0', true),
  returnIf('-o IFACE', '-o lo', false),
  returnIf('-i IFACE', '-i eth0', true, { direction: 'in' }),
  returnIf('-i IFACE', '-i eth+', true, { direction: 'in' }),
  returnIf('-m tcp --dport', '-p tcp -m tcp --dport 80', true),
  returnIf('-m tcp --sport', '-p tcp -m tcp --sport 1:1023', false),
  ipt({
    audits: '-m udp --dport',
    protocol: 'udp',
    port: 53,
    rules: nat(['-A OUTPUT -p udp -m udp --dport 53 -j REDIRECT --to-ports 15053']),
    kernel: 'pod:15053',
  }),
  ipt({
    audits: '-m udp --dport',
    protocol: 'udp',
    port: 53,
    rules: nat(['-A OUTPUT -p udp -m udp --dport 53 -j RETURN', '-A OUTPUT -p udp -j REDIRECT --to-ports 15053']),
    kernel: 'sink:53',
  }),
  returnIf('-m multiport --dports', '-p tcp -m multiport --dports 443,80:81', true),
  returnIf('-m owner --uid-owner', '-m owner --uid-owner 1000', true),
  returnIf('-m owner --uid-owner', '-m owner ! --uid-owner 1000', false),
  returnIf('-m owner --gid-owner', '-m owner --gid-owner 1000', true),
  returnIf('-m owner --gid-owner', '-m owner --gid-owner 1001-2000', false),
  returnIf('-m comment --comment', '-m comment --comment "anything"', true),
  returnIf('-m mark --mark', '-m mark --mark 0x0/0xff', true),
  returnIf('-m connmark --mark', '-m connmark --mark 0x1', false),
  returnIf('-m conntrack --ctstate', '-m conntrack --ctstate NEW', true),
  returnIf('-m conntrack --ctstate', '-m conntrack --ctstate ESTABLISHED,RELATED', false),
  returnIf('-m state --state', '-m state --state NEW', true),
  ipt({
    audits: '-m conntrack --ctstate (before conntrack)',
    rules: table('raw', ['-A OUTPUT -m conntrack --ctstate INVALID -j CT --notrack']) + nat(),
    kernel: ORIGINAL_OUT,
  }),
  ipt({
    audits: '-m conntrack --ctstate (before conntrack)',
    rules: table('raw', ['-A OUTPUT -m conntrack --ctstate NEW -j CT --notrack']) + nat(),
    kernel: REDIRECTED_OUT,
  }),
  ipt({
    audits: '-m connmark --mark (before conntrack)',
    rules: table('raw', ['-A OUTPUT -m connmark --mark 0x0 -j CT --notrack']) + nat(),
    kernel: REDIRECTED_OUT,
    model: 'unknown',
  }),
  ipt({
    audits: '-m conntrack --ctstate (untracked)',
    rules:
      table('raw', ['-A OUTPUT -j CT --notrack']) +
      table('filter', ['-A OUTPUT -m conntrack --ctstate UNTRACKED -j DROP']) +
      nat(),
    kernel: 'dropped',
  }),
];

function nftCase(audits: string, script: string, kernel: string, extra: Partial<KernelCase> = {}): KernelCase {
  return { audits, backend: 'nft', direction: 'out', model: 'exact', rules: script, kernel, ...extra };
}

interface InetParts {
  /** Statements in the mesh's nat chains, before their REDIRECT. */
  readonly output?: string;
  readonly prerouting?: string;
  /** A chain of its own: `hook`, `type`, `priority` and its statements. */
  readonly chain?: {
    readonly hook: 'output' | 'prerouting';
    readonly type: string;
    readonly priority: string;
    readonly body: string;
  };
}

/** An inet table whose nat chains redirect TCP to port 80, after the parts given; it names no address. */
function inet(parts: InetParts = {}): string {
  const extra = parts.chain
    ? `chain extra { type ${parts.chain.type} hook ${parts.chain.hook} priority ${parts.chain.priority}; ${parts.chain.body}; };`
    : '';
  return `table inet t { ${extra}
    chain output { type nat hook output priority -100; ${parts.output ?? ''}; tcp dport 80 redirect to :15001; };
    chain prerouting { type nat hook prerouting priority -100; ${parts.prerouting ?? ''}; tcp dport 80 redirect to :15006; }; }`;
}

/** nft: `match` then `return` in a nat chain before the mesh's. */
function nftReturnIf(audits: string, match: string, matched: boolean, direction: 'out' | 'in' = 'out'): KernelCase {
  const chain = direction === 'out' ? 'output' : 'prerouting';
  const kernel = matched
    ? direction === 'out'
      ? ORIGINAL_OUT
      : ORIGINAL_IN
    : direction === 'out'
      ? REDIRECTED_OUT
      : REDIRECTED_IN;
  return nftCase(audits, inet({ [chain]: `${match} accept` }), kernel, { direction });
}

const NFT_STATEMENTS: KernelCase[] = [
  nftCase('redirect to :P', inet(), REDIRECTED_OUT),
  nftCase('redirect to :P', inet(), REDIRECTED_OUT, { family: 'ipv6' }),
  nftCase('redirect to :P', inet(), REDIRECTED_IN, { direction: 'in', family: 'ipv6' }),
  nftCase('redirect', inet({ output: 'meta l4proto tcp redirect' }), 'pod:80'),
  nftCase('dnat to ADDR:PORT', inet({ output: `meta l4proto tcp dnat ip to ${OTHER_SERVICE}:8081` }), 'sink:8081'),
  nftCase('accept', inet({ output: 'accept' }), ORIGINAL_OUT),
  nftCase('return', inet({ output: 'return' }), ORIGINAL_OUT),
  nftCase(
    'drop',
    inet({ chain: { hook: 'output', type: 'filter', priority: 'filter', body: 'meta l4proto tcp drop' } }),
    'dropped',
  ),
  nftCase(
    'reject',
    inet({ chain: { hook: 'output', type: 'filter', priority: 'filter', body: 'meta l4proto tcp reject' } }),
    'dropped',
  ),
  nftCase(
    'jump CHAIN / goto CHAIN',
    'table ip t { chain c { accept; }; chain o { type nat hook output priority 0; jump c; tcp dport 80 redirect to :15001; }; }',
    ORIGINAL_OUT,
  ),
  nftCase(
    'jump CHAIN / goto CHAIN',
    'table ip t { chain c { return; }; chain o { type nat hook output priority 0; goto c; tcp dport 80 redirect to :15001; }; }',
    ORIGINAL_OUT,
  ),
  nftCase('counter', inet({ output: 'counter' }), REDIRECTED_OUT),
  nftCase('log', inet({ output: 'log prefix "audit "' }), REDIRECTED_OUT),
  nftCase(
    'notrack',
    inet({ chain: { hook: 'output', type: 'filter', priority: 'raw', body: 'notrack' } }),
    ORIGINAL_OUT,
  ),
  nftCase(
    'notrack',
    inet({ chain: { hook: 'prerouting', type: 'filter', priority: 'raw', body: 'notrack' } }),
    ORIGINAL_IN,
    {
      direction: 'in',
    },
  ),
  nftCase(
    'notrack',
    inet({ chain: { hook: 'output', type: 'filter', priority: 'mangle', body: 'notrack' } }),
    REDIRECTED_OUT,
  ),
  nftCase(
    'notrack',
    inet({ chain: { hook: 'output', type: 'filter', priority: '-200', body: 'notrack' } }),
    REDIRECTED_OUT,
    {
      model: 'unknown',
    },
  ),
  nftCase(
    'ct zone set N',
    inet({ chain: { hook: 'output', type: 'filter', priority: 'raw', body: 'ct zone set 7' } }),
    REDIRECTED_OUT,
  ),
  nftCase(
    'meta mark set V',
    'table ip t { chain m { type route hook output priority mangle; meta mark set 0x1; }; chain o { type nat hook output priority 0; meta mark 0x1 return; tcp dport 80 redirect to :15001; }; }',
    ORIGINAL_OUT,
  ),
  nftCase(
    'ct mark set meta mark',
    'table ip t { chain m { type route hook output priority mangle; meta mark set 0x1 ct mark set meta mark; }; chain o { type nat hook output priority 0; ct mark 0x1 return; tcp dport 80 redirect to :15001; }; }',
    ORIGINAL_OUT,
  ),
  nftCase(
    'meta mark set ct mark',
    'table ip t { chain m { type route hook output priority mangle; meta mark set 0x1 ct mark set meta mark meta mark set 0x0 meta mark set ct mark; }; chain o { type nat hook output priority 0; meta mark 0x1 return; tcp dport 80 redirect to :15001; }; }',
    ORIGINAL_OUT,
  ),
  nftCase(
    'tproxy to :P',
    `table ip t { chain p { type filter hook prerouting priority mangle; tcp dport 80 meta mark set 0x${TPROXY_MARK.toString(16)} tproxy to :15006; }; }`,
    REDIRECTED_IN,
    { direction: 'in' },
  ),
];

const HOOK_ORDER: KernelCase[] = [
  nftCase(
    'nat chain priority (NAT core at -100)',
    'table ip t { chain m { type route hook output priority -150; meta mark set 0x1; }; chain o { type nat hook output priority -160; meta mark 0x1 return; tcp dport 80 redirect to :15001; }; }',
    ORIGINAL_OUT,
  ),
  nftCase(
    'nat chain priority (NAT core at -100)',
    'table ip t { chain m { type route hook output priority 0; meta mark set 0x1; }; chain o { type nat hook output priority 50; meta mark 0x1 return; tcp dport 80 redirect to :15001; }; }',
    REDIRECTED_OUT,
  ),
];

const NFT_MATCHES: KernelCase[] = [
  nftReturnIf('meta l4proto', 'meta l4proto tcp', true),
  nftReturnIf('ip protocol / ip6 nexthdr', 'ip protocol udp', false),
  nftReturnIf('meta nfproto', 'meta nfproto ipv4', true),
  nftReturnIf('ip saddr / ip daddr', 'ip daddr 10.96.0.0/12', true),
  nftReturnIf('ip saddr / ip daddr', 'ip saddr != 10.0.0.0/8', false),
  nftReturnIf('ip6 saddr / ip6 daddr', 'ip6 daddr fd00:10:96::/108', false),
  nftReturnIf('meta iifname / meta oifname', 'oifname "eth0"', true),
  nftReturnIf('meta iifname / meta oifname', 'iifname "eth*"', true, 'in'),
  nftReturnIf('meta skuid / meta skgid', 'meta skuid 1000', true),
  nftReturnIf('meta skuid / meta skgid', 'meta skgid != 1000', false),
  nftReturnIf('tcp dport / tcp sport', 'tcp dport { 80, 443 }', true),
  nftReturnIf('tcp dport / tcp sport', 'tcp sport 1-1023', false),
  nftReturnIf('th dport / th sport', 'th dport 80', true),
  nftReturnIf('udp dport / udp sport', 'udp dport 80', false),
  nftCase('udp dport / udp sport', inet({ output: 'udp dport 53 redirect to :15053' }), 'pod:15053', {
    protocol: 'udp',
    port: 53,
  }),
  nftCase('th dport / th sport', inet({ output: 'meta l4proto udp th dport 53 redirect to :15053' }), 'pod:15053', {
    protocol: 'udp',
    port: 53,
  }),
  nftReturnIf('meta mark', 'meta mark & 0xff == 0x0', true),
  nftReturnIf('ct mark', 'ct mark 0x1', false),
  nftReturnIf('ct state', 'ct state new', true),
  nftReturnIf('ct state', 'ct state established', false),
];

export const KERNEL_CASES: readonly KernelCase[] = [
  ...IPTABLES_TARGETS,
  ...IPTABLES_MATCHES,
  ...NFT_STATEMENTS,
  ...HOOK_ORDER,
  ...NFT_MATCHES,
];
