import { describe, expect, it } from 'vitest';
import { matchesOf } from './iptables-save-dump.js';

// The matches of a rule as iptables-save 1.8.9 prints them (each shape below was read back from a
// network namespace with iptables-nft-save, iptables-legacy-save or ip6tables-save), and a few
// as iptables-restore takes them (long option names, `-p 6`, comma lists, dotted netmasks). A
// match this reader does not model is one unknown match naming the module, option and values.

const v6 = { family: 'ipv6' } as const;
const mangle = { table: 'mangle' } as const;
const tcp = { kind: 'protocol', protocols: ['tcp'], negated: false } as const;
const udp = { kind: 'protocol', protocols: ['udp'], negated: false } as const;
const ports = (field: 'dport' | 'sport', negated: boolean, ...ranges: Array<[number, number]>): unknown => ({
  kind: 'port',
  field,
  ports: { kind: 'ranges', ranges: ranges.map(([from, to]) => ({ from, to })) },
  negated,
});
const cidr = (family: 'ipv4' | 'ipv6', base: bigint, prefix: number): unknown => ({ family, base, prefix });
const unknown = (text: string): unknown => ({ kind: 'unknown', text });

describe('-p, -s, -d, -i, -o', () => {
  it("Istio's loopback rule: every option negated on its own", () => {
    expect(
      matchesOf(
        '-A ISTIO_OUTPUT ! -d 127.0.0.1/32 -o lo -p tcp -m tcp ! --dport 15008 -m owner --uid-owner 1337 -j RETURN',
        { userChains: ['ISTIO_OUTPUT'] },
      ),
    ).toEqual([
      { kind: 'address', field: 'daddr', family: 'ipv4', cidrs: [cidr('ipv4', 0x7f000001n, 32)], negated: true },
      { kind: 'interface', field: 'oif', names: ['lo'], negated: false },
      tcp,
      ports('dport', true, [15008, 15008]),
      { kind: 'owner', field: 'uid', ids: [{ from: 1337, to: 1337 }], negated: false },
    ]);
  });

  it('negated source, input and output interfaces', () => {
    expect(matchesOf('-A POSTROUTING ! -s 10.0.0.0/8 ! -o eth1 -j RETURN')).toEqual([
      { kind: 'address', field: 'saddr', family: 'ipv4', cidrs: [cidr('ipv4', 0x0a000000n, 8)], negated: true },
      { kind: 'interface', field: 'oif', names: ['eth1'], negated: true },
    ]);
    expect(matchesOf('-A PREROUTING ! -i eth0 -p tcp -j REDIRECT --to-ports 65535')).toEqual([
      { kind: 'interface', field: 'iif', names: ['eth0'], negated: true },
      tcp,
    ]);
    expect(matchesOf('-A PREROUTING -i lo -j RETURN')).toEqual([
      { kind: 'interface', field: 'iif', names: ['lo'], negated: false },
    ]);
  });

  it('ip6tables: networks of the IPv6 family; an IPv4 network there (or the reverse) is unknown', () => {
    expect(matchesOf('-A OUTPUT -s fd00::/64 ! -d fd00::1/128 -j RETURN', v6)).toEqual([
      { kind: 'address', field: 'saddr', family: 'ipv6', cidrs: [cidr('ipv6', 0xfd00n << 112n, 64)], negated: false },
      {
        kind: 'address',
        field: 'daddr',
        family: 'ipv6',
        cidrs: [cidr('ipv6', (0xfd00n << 112n) | 1n, 128)],
        negated: true,
      },
    ]);
    expect(matchesOf('-A OUTPUT ! -d 127.0.0.1/32 -j RETURN', v6)).toEqual([unknown('! -d 127.0.0.1/32')]);
    expect(matchesOf('-A OUTPUT -s 127.0.0.6/32 -j RETURN', v6)).toEqual([unknown('-s 127.0.0.6/32')]);
    expect(matchesOf('-A OUTPUT -d ::1/128 -j RETURN')).toEqual([unknown('-d ::1/128')]);
    expect(matchesOf('-A OUTPUT -d 10.0.0.300/32 -j RETURN')).toEqual([unknown('-d 10.0.0.300/32')]);
  });

  it('iptables-restore input: long option names and comma-separated networks', () => {
    expect(
      matchesOf(
        '-A OUTPUT --protocol tcp --source 10.0.0.1,10.0.0.2 --destination 10.1.0.0/16 --out-interface lo --jump RETURN',
      ),
    ).toEqual([
      tcp,
      {
        kind: 'address',
        field: 'saddr',
        family: 'ipv4',
        cidrs: [cidr('ipv4', 0x0a000001n, 32), cidr('ipv4', 0x0a000002n, 32)],
        negated: false,
      },
      { kind: 'address', field: 'daddr', family: 'ipv4', cidrs: [cidr('ipv4', 0x0a010000n, 16)], negated: false },
      { kind: 'interface', field: 'oif', names: ['lo'], negated: false },
    ]);
    expect(
      matchesOf(
        '-A PREROUTING --in-interface eth0 --src 10.0.0.1 --dst 10.0.0.2 --match tcp --protocol tcp --destination-port 80 --source-port 1024 --goto X',
        { userChains: ['X'] },
      ),
    ).toEqual([
      { kind: 'interface', field: 'iif', names: ['eth0'], negated: false },
      { kind: 'address', field: 'saddr', family: 'ipv4', cidrs: [cidr('ipv4', 0x0a000001n, 32)], negated: false },
      { kind: 'address', field: 'daddr', family: 'ipv4', cidrs: [cidr('ipv4', 0x0a000002n, 32)], negated: false },
      tcp,
      ports('dport', false, [80, 80]),
      ports('sport', false, [1024, 1024]),
    ]);
    expect(
      matchesOf('-A OUTPUT -p tcp --match multiport --destination-ports 80,443 --source-ports 1024:2048 -j RETURN'),
    ).toEqual([tcp, ports('dport', false, [80, 80], [443, 443]), ports('sport', false, [1024, 2048])]);
    expect(matchesOf('-A OUTPUT -d 10.0.0.1,fd00::1 -j RETURN')).toEqual([unknown('-d 10.0.0.1,fd00::1')]);
  });

  it('dotted netmasks: a contiguous one is a prefix, a non-contiguous one (which iptables-save prints dotted) is unknown', () => {
    const daddr = (base: bigint, prefix: number): unknown => [
      { kind: 'address', field: 'daddr', family: 'ipv4', cidrs: [cidr('ipv4', base, prefix)], negated: false },
    ];
    expect(matchesOf('-A OUTPUT -d 10.1.2.3/255.255.0.0 -j RETURN')).toEqual(daddr(0x0a010000n, 16));
    expect(matchesOf('-A OUTPUT -d 10.1.2.3/255.255.255.255 -j RETURN')).toEqual(daddr(0x0a010203n, 32));
    expect(matchesOf('-A OUTPUT -d 10.1.2.3/0.0.0.0 -j RETURN')).toEqual(daddr(0n, 0));
    expect(matchesOf('-A OUTPUT -d 10.1.2.3/255.255.255.254 -j RETURN')).toEqual(daddr(0x0a010202n, 31));
    expect(matchesOf('-A OUTPUT -d 10.0.0.0/255.0.255.0 -j RETURN')).toEqual([unknown('-d 10.0.0.0/255.0.255.0')]);
    expect(matchesOf('-A OUTPUT -d 10.0.0.0/0.255.0.0 -j RETURN')).toEqual([unknown('-d 10.0.0.0/0.255.0.0')]);
    expect(matchesOf('-A OUTPUT -d 10.0.0.0/255.0.0.255 -j RETURN')).toEqual([unknown('-d 10.0.0.0/255.0.0.255')]);
    expect(matchesOf('-A OUTPUT -d 10.0.0.0/255.0.0 -j RETURN')).toEqual([unknown('-d 10.0.0.0/255.0.0')]);
    expect(matchesOf('-A OUTPUT -d 10.0.0.0/::ffff:255.255.0.0 -j RETURN')).toEqual([
      unknown('-d 10.0.0.0/::ffff:255.255.0.0'),
    ]);
  });

  it('protocols by name (gre, as printed with /etc/protocols) or by number (as printed without it), in any case', () => {
    const protocol = (name: string, negated = false): unknown => [{ kind: 'protocol', protocols: [name], negated }];
    expect(matchesOf('-A OUTPUT -p gre -j RETURN')).toEqual(protocol('gre'));
    expect(matchesOf('-A OUTPUT -p 47 -j RETURN')).toEqual(protocol('47'));
    expect(matchesOf('-A OUTPUT ! -p udp -j RETURN')).toEqual(protocol('udp', true));
    expect(matchesOf('-A OUTPUT -p ipv6-icmp -j RETURN', v6)).toEqual(protocol('ipv6-icmp'));
    expect(matchesOf('-A OUTPUT -p 6 -j RETURN')).toEqual([tcp]);
    expect(matchesOf('-A OUTPUT -p 17 -j RETURN')).toEqual([udp]);
    expect(matchesOf('-A OUTPUT -p 1 -j RETURN')).toEqual(protocol('icmp'));
    expect(matchesOf('-A OUTPUT -p 58 -j RETURN', v6)).toEqual(protocol('ipv6-icmp'));
    expect(matchesOf('-A OUTPUT -p 132 -j RETURN')).toEqual(protocol('sctp'));
    expect(matchesOf('-A OUTPUT -p TCP -j RETURN')).toEqual([tcp]);
  });

  it('-p all and -p 0 are every protocol; negated, nothing can match them, so they are unknown', () => {
    const every = [{ kind: 'protocol', protocols: ['tcp', 'udp', 'icmp', 'ipv6-icmp', 'sctp'], negated: false }];
    expect(matchesOf('-A OUTPUT -p all -j RETURN')).toEqual(every);
    expect(matchesOf('-A OUTPUT -p ALL -j RETURN')).toEqual(every);
    expect(matchesOf('-A OUTPUT -p 0 -j RETURN')).toEqual(every);
    expect(matchesOf('-A OUTPUT ! -p all -j RETURN')).toEqual([unknown('! -p all')]);
    expect(matchesOf('-A OUTPUT ! -p 0 -j RETURN')).toEqual([unknown('! -p 0')]);
  });
});

describe('-m tcp, udp, multiport', () => {
  it('--dport and --sport, single ports and ranges, negated or not', () => {
    expect(matchesOf('-A OUTPUT -p tcp -m tcp --sport 1000:2000 -j RETURN')).toEqual([
      tcp,
      ports('sport', false, [1000, 2000]),
    ]);
    expect(
      matchesOf('-A ISTIO_OUTPUT_DNS -p udp -m udp --dport 53 -j RETURN', { userChains: ['ISTIO_OUTPUT_DNS'] }),
    ).toEqual([udp, ports('dport', false, [53, 53])]);
    expect(matchesOf('-A OUTPUT -p udp -m udp ! --sport 15053 -j RETURN')).toEqual([
      udp,
      ports('sport', true, [15053, 15053]),
    ]);
  });

  it('multiport --dports and --sports lists, negated or not; --ports is unknown', () => {
    expect(matchesOf('-A OUTPUT -p tcp -m multiport ! --dports 53,15008 -j RETURN')).toEqual([
      tcp,
      ports('dport', true, [53, 53], [15008, 15008]),
    ]);
    expect(matchesOf('-A OUTPUT -p udp -m multiport --sports 1000:2000,53 -j RETURN')).toEqual([
      udp,
      ports('sport', false, [1000, 2000], [53, 53]),
    ]);
    expect(matchesOf('-A OUTPUT -p tcp -m multiport --ports 80 -j RETURN')).toEqual([
      tcp,
      unknown('-m multiport --ports 80'),
    ]);
  });

  it('a tcp option that is not a port, negated or not, is unknown with all its values, up to the next option', () => {
    expect(matchesOf('-A OUTPUT -p tcp -m tcp --tcp-flags SYN,ACK SYN -j RETURN')).toEqual([
      tcp,
      unknown('-m tcp --tcp-flags SYN,ACK SYN'),
    ]);
    expect(matchesOf('-A OUTPUT -p tcp -m tcp ! --tcp-flags FIN,SYN,RST,ACK SYN -j RETURN')).toEqual([
      tcp,
      unknown('-m tcp ! --tcp-flags FIN,SYN,RST,ACK SYN'),
    ]);
    expect(matchesOf('-A OUTPUT -p tcp -m tcp --dport 80 --tcp-flags SYN,ACK SYN')).toEqual([
      tcp,
      ports('dport', false, [80, 80]),
      unknown('-m tcp --tcp-flags SYN,ACK SYN'),
    ]);
    expect(matchesOf('-A OUTPUT -p tcp -m tcp ! --dport 80 --tcp-option 2 -j RETURN')).toEqual([
      tcp,
      ports('dport', true, [80, 80]),
      unknown('-m tcp --tcp-option 2'),
    ]);
    expect(matchesOf('-A OUTPUT -p tcp -m tcp ! --tcp-flags SYN,ACK SYN FIN -j RETURN')).toEqual([
      tcp,
      unknown('-m tcp ! --tcp-flags SYN,ACK SYN FIN'),
    ]);
    expect(matchesOf('-A OUTPUT -p tcp -m tcp --dports 80 -j RETURN')).toEqual([tcp, unknown('-m tcp --dports 80')]);
    expect(matchesOf('-A OUTPUT -p udp -m udp --dports 80 -j RETURN')).toEqual([udp, unknown('-m udp --dports 80')]);
    expect(matchesOf('-A OUTPUT -p tcp -m multiport --dport 80 -j RETURN')).toEqual([
      tcp,
      unknown('-m multiport --dport 80'),
    ]);
  });

  it('a port that is not one, any port, or no value is unknown', () => {
    expect(matchesOf('-A OUTPUT -p tcp -m tcp --dport 0 -j RETURN')).toEqual([tcp, unknown('-m tcp --dport 0')]);
    expect(matchesOf('-A OUTPUT -p tcp -m tcp ! --dport 65536 -j RETURN')).toEqual([
      tcp,
      unknown('-m tcp ! --dport 65536'),
    ]);
    expect(matchesOf('-A OUTPUT -p tcp -m tcp --dport * -j RETURN')).toEqual([tcp, unknown('-m tcp --dport *')]);
    expect(matchesOf('-A OUTPUT -p tcp -m tcp --dport')).toEqual([tcp, unknown('-m tcp --dport')]);
    expect(matchesOf('-A OUTPUT -p tcp -m tcp ! --sport')).toEqual([tcp, unknown('-m tcp ! --sport')]);
  });

  it('iptables-restore input: --dport with no -m is unknown, named without a module', () => {
    expect(matchesOf('-A ISTIO_INBOUND -p tcp --dport 15008 -j RETURN', { userChains: ['ISTIO_INBOUND'] })).toEqual([
      tcp,
      unknown('--dport 15008'),
    ]);
    expect(matchesOf('-A OUTPUT -p tcp ! --dport 15008 -j RETURN')).toEqual([tcp, unknown('! --dport 15008')]);
  });
});

describe('-m owner', () => {
  it('--uid-owner and --gid-owner, one id or a range, negated or not', () => {
    expect(matchesOf('-A OUTPUT -m owner ! --gid-owner 1001 -m owner --uid-owner 0-99 -j RETURN')).toEqual([
      { kind: 'owner', field: 'gid', ids: [{ from: 1001, to: 1001 }], negated: true },
      { kind: 'owner', field: 'uid', ids: [{ from: 0, to: 99 }], negated: false },
    ]);
    expect(matchesOf('-A OUTPUT -m owner --uid-owner 1000-2000 -j RETURN')).toEqual([
      { kind: 'owner', field: 'uid', ids: [{ from: 1000, to: 2000 }], negated: false },
    ]);
  });

  it('the id bounds: 0 to 4294967295, alone or as the ends of a range', () => {
    const uid = (from: number, to: number): unknown => [
      { kind: 'owner', field: 'uid', ids: [{ from, to }], negated: false },
    ];
    expect(matchesOf('-A OUTPUT -m owner --uid-owner 4294967295 -j RETURN')).toEqual(uid(4294967295, 4294967295));
    expect(matchesOf('-A OUTPUT -m owner --uid-owner 0-4294967295 -j RETURN')).toEqual(uid(0, 4294967295));
    expect(matchesOf('-A OUTPUT -m owner --uid-owner 7-7 -j RETURN')).toEqual(uid(7, 7));
    expect(matchesOf('-A OUTPUT -m owner --uid-owner 4294967296 -j RETURN')).toEqual([
      unknown('-m owner --uid-owner 4294967296'),
    ]);
    expect(matchesOf('-A OUTPUT -m owner --uid-owner 0-4294967296 -j RETURN')).toEqual([
      unknown('-m owner --uid-owner 0-4294967296'),
    ]);
    expect(matchesOf('-A OUTPUT -m owner --uid-owner 99999999999 -j RETURN')).toEqual([
      unknown('-m owner --uid-owner 99999999999'),
    ]);
    expect(matchesOf('-A OUTPUT -m owner --uid-owner 2000-1000 -j RETURN')).toEqual([
      unknown('-m owner --uid-owner 2000-1000'),
    ]);
    expect(matchesOf('-A OUTPUT -m owner --uid-owner x1-2 -j RETURN')).toEqual([unknown('-m owner --uid-owner x1-2')]);
    expect(matchesOf('-A OUTPUT -m owner --uid-owner 1-2x -j RETURN')).toEqual([unknown('-m owner --uid-owner 1-2x')]);
    expect(matchesOf('-A OUTPUT -m owner ! --gid-owner root -j RETURN')).toEqual([
      unknown('-m owner ! --gid-owner root'),
    ]);
  });

  it('--socket-exists takes no value: unknown, and the options after it are read as before', () => {
    expect(matchesOf('-A OUTPUT -m owner --socket-exists -j RETURN')).toEqual([unknown('-m owner --socket-exists')]);
    expect(matchesOf('-A OUTPUT -m owner --socket-exists ! --uid-owner 1337 -j RETURN')).toEqual([
      unknown('-m owner --socket-exists'),
      { kind: 'owner', field: 'uid', ids: [{ from: 1337, to: 1337 }], negated: true },
    ]);
    expect(matchesOf('-A OUTPUT -m owner ! --socket-exists')).toEqual([unknown('-m owner ! --socket-exists')]);
  });
});

describe('-m comment, mark, connmark, conntrack, state', () => {
  it('a comment is kept as written, quotes and all', () => {
    expect(matchesOf('-A OUTPUT -m comment --comment "proxy-init/ignore-port-4191,4190" -j RETURN')).toEqual([
      { kind: 'comment', text: 'proxy-init/ignore-port-4191,4190' },
    ]);
    expect(matchesOf('-A OUTPUT -m comment --comment "a \\"b\\"" -j RETURN')).toEqual([
      { kind: 'comment', text: 'a "b"' },
    ]);
    expect(matchesOf('-A OUTPUT -m comment --comments x -j RETURN')).toEqual([unknown('-m comment --comments x')]);
  });

  it('--mark VALUE[/MASK], in hex or decimal, of the packet (mark) or the connection (connmark)', () => {
    const mark = (field: 'mark' | 'ctmark', value: number, mask: number, negated = false): unknown => [
      { kind: 'mark', field, value, mask, negated },
    ];
    expect(matchesOf('-A OUTPUT -m mark --mark 0x539 -j RETURN', mangle)).toEqual(mark('mark', 0x539, 0xffffffff));
    expect(matchesOf('-A OUTPUT -m mark ! --mark 0x53a -j RETURN', mangle)).toEqual(
      mark('mark', 0x53a, 0xffffffff, true),
    );
    expect(matchesOf('-A OUTPUT -m mark --mark 0x1/0xff -j RETURN', mangle)).toEqual(mark('mark', 1, 0xff));
    expect(matchesOf('-A OUTPUT -m mark --mark 0xffffffff -j RETURN', mangle)).toEqual(
      mark('mark', 0xffffffff, 0xffffffff),
    );
    expect(matchesOf('-A OUTPUT -m mark --mark 0xABCDEF12/0xFfFf0000 -j RETURN', mangle)).toEqual(
      mark('mark', 0xabcdef12, 0xffff0000),
    );
    expect(matchesOf('-A OUTPUT -m mark --mark 1337/4294967295 -j RETURN', mangle)).toEqual(
      mark('mark', 1337, 0xffffffff),
    );
    expect(matchesOf('-A OUTPUT -m connmark ! --mark 0x7 -j RETURN', mangle)).toEqual(
      mark('ctmark', 7, 0xffffffff, true),
    );
  });

  it('a mark that is not 32 bits of hex or decimal is unknown', () => {
    const refused = (value: string): void => {
      expect(matchesOf(`-A OUTPUT -m mark --mark ${value} -j RETURN`, mangle)).toEqual([
        unknown(`-m mark --mark ${value}`),
      ]);
    };
    refused('0x1ffffffff');
    refused('4294967296');
    refused('0x1/4294967296');
    refused('12345678901');
    refused('0x');
    refused('0xg');
    refused('x0x5');
    refused('0x5z');
    refused('0x5/');
    refused('/0x5');
    refused('mark');
    refused('+5');
    refused('0x1/0xff/0xff');
    refused('1e3');
    expect(matchesOf('-A OUTPUT -m mark --set-mark 0x1 -j RETURN', mangle)).toEqual([
      unknown('-m mark --set-mark 0x1'),
    ]);
    expect(matchesOf('-A OUTPUT -m connmark --ctmark 0x1 -j RETURN', mangle)).toEqual([
      unknown('-m connmark --ctmark 0x1'),
    ]);
  });

  it('conntrack --ctstate and state --state, negated or not, in any case', () => {
    expect(matchesOf('-A OUTPUT -m conntrack --ctstate INVALID,NEW,UNTRACKED -j RETURN')).toEqual([
      { kind: 'ctstate', states: ['invalid', 'new', 'untracked'], negated: false },
    ]);
    expect(matchesOf('-A OUTPUT -m conntrack ! --ctstate RELATED,ESTABLISHED -j RETURN')).toEqual([
      { kind: 'ctstate', states: ['related', 'established'], negated: true },
    ]);
    expect(matchesOf('-A OUTPUT -m state --state NEW -j RETURN')).toEqual([
      { kind: 'ctstate', states: ['new'], negated: false },
    ]);
    expect(matchesOf('-A OUTPUT -m state ! --state invalid -j RETURN')).toEqual([
      { kind: 'ctstate', states: ['invalid'], negated: true },
    ]);
  });

  it('a state this reader does not model, or another conntrack option, is unknown', () => {
    expect(matchesOf('-A OUTPUT -m conntrack --ctstate DNAT -j RETURN')).toEqual([
      unknown('-m conntrack --ctstate DNAT'),
    ]);
    expect(matchesOf('-A OUTPUT -m conntrack --ctstate NEW,SNAT -j RETURN')).toEqual([
      unknown('-m conntrack --ctstate NEW,SNAT'),
    ]);
    expect(matchesOf('-A OUTPUT -m conntrack --ctstate NEW --ctproto 6 -j RETURN')).toEqual([
      { kind: 'ctstate', states: ['new'], negated: false },
      unknown('-m conntrack --ctproto 6'),
    ]);
    expect(matchesOf('-A OUTPUT -m conntrack ! --ctstate NEW --ctproto 6 -j RETURN')).toEqual([
      { kind: 'ctstate', states: ['new'], negated: true },
      unknown('-m conntrack --ctproto 6'),
    ]);
    expect(matchesOf('-A OUTPUT -m conntrack --ctstate NEW ! --ctproto 6 -j RETURN')).toEqual([
      { kind: 'ctstate', states: ['new'], negated: false },
      unknown('-m conntrack ! --ctproto 6'),
    ]);
    expect(matchesOf('-A OUTPUT -m state --ctstate NEW -j RETURN')).toEqual([unknown('-m state --ctstate NEW')]);
    expect(matchesOf('-A OUTPUT -m conntrack --state NEW -j RETURN')).toEqual([unknown('-m conntrack --state NEW')]);
  });
});

describe('modules this reader does not model', () => {
  it('one unknown match holding the module and every option up to the next rule-level option', () => {
    expect(matchesOf('-A OUTPUT -m addrtype ! --dst-type LOCAL --limit-iface-out -j RETURN')).toEqual([
      unknown('-m addrtype ! --dst-type LOCAL --limit-iface-out'),
    ]);
    expect(matchesOf('-A PREROUTING -p tcp -m socket -j RETURN', mangle)).toEqual([tcp, unknown('-m socket')]);
    expect(matchesOf('-A OUTPUT -m addrtype --dst-type LOCAL')).toEqual([unknown('-m addrtype --dst-type LOCAL')]);
    expect(matchesOf('-A OUTPUT -m addrtype --dst-type LOCAL -m owner --uid-owner 1337 -j RETURN')).toEqual([
      unknown('-m addrtype --dst-type LOCAL'),
      { kind: 'owner', field: 'uid', ids: [{ from: 1337, to: 1337 }], negated: false },
    ]);
  });

  it('iptables-restore input: a negated rule-level option after the module ends it; a lone "!" at the end does not', () => {
    expect(matchesOf('-A OUTPUT -m addrtype --dst-type LOCAL ! -d 127.0.0.1/32 -j RETURN')).toEqual([
      unknown('-m addrtype --dst-type LOCAL'),
      { kind: 'address', field: 'daddr', family: 'ipv4', cidrs: [cidr('ipv4', 0x7f000001n, 32)], negated: true },
    ]);
    expect(matchesOf('-A OUTPUT -m addrtype --dst-type LOCAL --protocol tcp')).toEqual([
      unknown('-m addrtype --dst-type LOCAL'),
      tcp,
    ]);
    expect(matchesOf('-A OUTPUT -m addrtype --dst-type LOCAL !')).toEqual([unknown('-m addrtype --dst-type LOCAL !')]);
  });
});
