import { describe, expect, it } from 'vitest';
import { actionsOf } from './iptables-save-dump.js';

// The targets of `-j` as iptables-save 1.8.9 prints them (each line below was read back from a
// network namespace with iptables-nft-save / iptables-legacy-save / ip6tables-save), and what
// iptables-restore accepts as input (`--set-mark`, `--to-ports A-A`, CONNMARK without masks).
// A target with options this reader does not model is an unknown action naming the whole target.

const mangle = { table: 'mangle' } as const;
const v6 = { family: 'ipv6' } as const;

describe('verdicts: ACCEPT, DROP, RETURN, REJECT', () => {
  it('each without options, and REJECT read as a drop with the options iptables-save prints', () => {
    expect(actionsOf('-A OUTPUT -j ACCEPT')).toEqual([{ kind: 'accept' }]);
    expect(actionsOf('-A OUTPUT -j DROP')).toEqual([{ kind: 'drop' }]);
    expect(actionsOf('-A OUTPUT -j RETURN')).toEqual([{ kind: 'return' }]);
    expect(actionsOf('-A OUTPUT -j REJECT --reject-with icmp-port-unreachable', { table: 'filter' })).toEqual([
      { kind: 'drop' },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j REJECT --reject-with tcp-reset', { table: 'filter' })).toEqual([
      { kind: 'drop' },
    ]);
  });

  it('a verdict given an option it does not take is unknown, not the verdict', () => {
    expect(actionsOf('-A OUTPUT -j ACCEPT --log-prefix x')).toEqual([
      { kind: 'unknown', text: '-j ACCEPT --log-prefix x' },
    ]);
    expect(actionsOf('-A OUTPUT -j DROP --log-prefix x')).toEqual([
      { kind: 'unknown', text: '-j DROP --log-prefix x' },
    ]);
    expect(actionsOf('-A OUTPUT -j RETURN --log-prefix x')).toEqual([
      { kind: 'unknown', text: '-j RETURN --log-prefix x' },
    ]);
  });
});

describe('jumps to user chains', () => {
  it('a declared user chain is a jump; -g is a goto', () => {
    expect(actionsOf('-A OUTPUT -j ISTIO_OUTPUT', { userChains: ['ISTIO_OUTPUT'] })).toEqual([
      { kind: 'jump', chain: 'ISTIO_OUTPUT' },
    ]);
    expect(actionsOf('-A OUTPUT -g ISTIO_OUTPUT', { userChains: ['ISTIO_OUTPUT'] })).toEqual([
      { kind: 'goto', chain: 'ISTIO_OUTPUT' },
    ]);
  });

  it('a chain the table does not declare, a built-in chain, or a chain with options is unknown', () => {
    expect(actionsOf('-A OUTPUT -j ISTIO_OUTPUT')).toEqual([{ kind: 'unknown', text: '-j ISTIO_OUTPUT' }]);
    expect(actionsOf('-A OUTPUT -g ISTIO_OUTPUT')).toEqual([{ kind: 'unknown', text: '-g ISTIO_OUTPUT' }]);
    expect(actionsOf('-A ISTIO_OUTPUT -j OUTPUT', { userChains: ['ISTIO_OUTPUT'] })).toEqual([
      { kind: 'unknown', text: '-j OUTPUT' },
    ]);
    expect(actionsOf('-A OUTPUT -j ISTIO_OUTPUT --zone 1', { userChains: ['ISTIO_OUTPUT'] })).toEqual([
      { kind: 'unknown', text: '-j ISTIO_OUTPUT --zone 1' },
    ]);
  });

  it('a user chain named like a property of every JavaScript object is still a jump', () => {
    expect(actionsOf('-A OUTPUT -j toString', { userChains: ['toString'] })).toEqual([
      { kind: 'jump', chain: 'toString' },
    ]);
    expect(actionsOf('-A OUTPUT -j constructor', { userChains: ['constructor'] })).toEqual([
      { kind: 'jump', chain: 'constructor' },
    ]);
  });
});

describe('REDIRECT', () => {
  it('--to-ports PORT, with or without --random; no --to-ports keeps the destination port', () => {
    expect(actionsOf('-A OUTPUT -p tcp -j REDIRECT --to-ports 15001')).toEqual([{ kind: 'redirect', port: 15001 }]);
    expect(actionsOf('-A OUTPUT -p tcp -j REDIRECT --to-ports 15001 --random')).toEqual([
      { kind: 'redirect', port: 15001 },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j REDIRECT')).toEqual([{ kind: 'redirect', port: undefined }]);
    expect(actionsOf('-A OUTPUT -p tcp -j REDIRECT --random')).toEqual([{ kind: 'redirect', port: undefined }]);
  });

  it('the port bounds: 1 and 65535 are ports, 0 and 65536 are not', () => {
    expect(actionsOf('-A OUTPUT -p tcp -j REDIRECT --to-ports 1')).toEqual([{ kind: 'redirect', port: 1 }]);
    expect(actionsOf('-A PREROUTING -p tcp -j REDIRECT --to-ports 65535')).toEqual([{ kind: 'redirect', port: 65535 }]);
    expect(actionsOf('-A OUTPUT -p tcp -j REDIRECT --to-ports 0')).toEqual([
      { kind: 'unknown', text: '-j REDIRECT --to-ports 0' },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j REDIRECT --to-ports 65536')).toEqual([
      { kind: 'unknown', text: '-j REDIRECT --to-ports 65536' },
    ]);
  });

  it('a range of one port (iptables-restore input) is that port; a wider range is unknown', () => {
    expect(actionsOf('-A OUTPUT -p tcp -j REDIRECT --to-ports 15001-15001')).toEqual([
      { kind: 'redirect', port: 15001 },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j REDIRECT --to-ports 15001-15002')).toEqual([
      { kind: 'unknown', text: '-j REDIRECT --to-ports 15001-15002' },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j REDIRECT --to-ports 15002-15001')).toEqual([
      { kind: 'unknown', text: '-j REDIRECT --to-ports 15002-15001' },
    ]);
  });

  it('a port with anything around it, or an option REDIRECT does not have, is unknown', () => {
    expect(actionsOf('-A OUTPUT -p tcp -j REDIRECT --to-ports x15001')).toEqual([
      { kind: 'unknown', text: '-j REDIRECT --to-ports x15001' },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j REDIRECT --to-ports 15001x')).toEqual([
      { kind: 'unknown', text: '-j REDIRECT --to-ports 15001x' },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j REDIRECT --to-ports 150011')).toEqual([
      { kind: 'unknown', text: '-j REDIRECT --to-ports 150011' },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j REDIRECT --to-ports 15001 --persistent')).toEqual([
      { kind: 'unknown', text: '-j REDIRECT --to-ports 15001 --persistent' },
    ]);
  });
});

describe('DNAT', () => {
  it('ADDRESS:PORT, :PORT and ADDRESS, with --random and --persistent', () => {
    expect(actionsOf('-A OUTPUT -d 10.0.0.0/16 -p tcp -j DNAT --to-destination 10.1.2.3:8080')).toEqual([
      { kind: 'dnat', address: { family: 'ipv4', value: 0x0a010203n }, port: 8080 },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination :8080')).toEqual([
      { kind: 'dnat', address: undefined, port: 8080 },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination 10.1.2.3')).toEqual([
      { kind: 'dnat', address: { family: 'ipv4', value: 0x0a010203n }, port: undefined },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination 10.1.2.3:8080 --random')).toEqual([
      { kind: 'dnat', address: { family: 'ipv4', value: 0x0a010203n }, port: 8080 },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination 10.1.2.3:8080 --persistent')).toEqual([
      { kind: 'dnat', address: { family: 'ipv4', value: 0x0a010203n }, port: 8080 },
    ]);
  });

  it('a port range, a bad port, a bad address, no destination or another option is unknown', () => {
    const unknown = (options: string): unknown => [{ kind: 'unknown', text: `-j DNAT ${options}` }];
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination 10.1.2.3:80-90 --random --persistent')).toEqual(
      unknown('--to-destination 10.1.2.3:80-90 --random --persistent'),
    );
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination 10.1.2.3:')).toEqual(
      unknown('--to-destination 10.1.2.3:'),
    );
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination 10.1.2.300:80')).toEqual(
      unknown('--to-destination 10.1.2.300:80'),
    );
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --random')).toEqual(unknown('--random'));
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination 10.1.2.3:8080 --to-ports 80')).toEqual(
      unknown('--to-destination 10.1.2.3:8080 --to-ports 80'),
    );
  });

  it('ip6tables: [ADDRESS]:PORT, [ADDRESS], ADDRESS and :PORT; an IPv4 address is not of the table', () => {
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination [::1]:8080', v6)).toEqual([
      { kind: 'dnat', address: { family: 'ipv6', value: 1n }, port: 8080 },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination [fd00::1]', v6)).toEqual([
      { kind: 'dnat', address: { family: 'ipv6', value: (0xfd00n << 112n) | 1n }, port: undefined },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination fd00::1', v6)).toEqual([
      { kind: 'dnat', address: { family: 'ipv6', value: (0xfd00n << 112n) | 1n }, port: undefined },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination :8080', v6)).toEqual([
      { kind: 'dnat', address: undefined, port: 8080 },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination 10.1.2.3', v6)).toEqual([
      { kind: 'unknown', text: '-j DNAT --to-destination 10.1.2.3' },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination [::1]:0', v6)).toEqual([
      { kind: 'unknown', text: '-j DNAT --to-destination [::1]:0' },
    ]);
  });

  it('ip6tables prints an address without a port bare, even when it starts with a colon', () => {
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination ::1', v6)).toEqual([
      { kind: 'dnat', address: { family: 'ipv6', value: 1n }, port: undefined },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination ::', v6)).toEqual([
      { kind: 'dnat', address: { family: 'ipv6', value: 0n }, port: undefined },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination ::ffff:10.0.0.1', v6)).toEqual([
      { kind: 'dnat', address: { family: 'ipv6', value: 0xffff0a000001n }, port: undefined },
    ]);
  });

  it('ip6tables: anything before the bracket, after it, or a bare number is unknown', () => {
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination x[::1]:8080', v6)).toEqual([
      { kind: 'unknown', text: '-j DNAT --to-destination x[::1]:8080' },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination [::1]x', v6)).toEqual([
      { kind: 'unknown', text: '-j DNAT --to-destination [::1]x' },
    ]);
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination 8080', v6)).toEqual([
      { kind: 'unknown', text: '-j DNAT --to-destination 8080' },
    ]);
  });

  it('iptables: an IPv6 address in brackets is not of the table', () => {
    expect(actionsOf('-A OUTPUT -p tcp -j DNAT --to-destination [::1]:8080')).toEqual([
      { kind: 'unknown', text: '-j DNAT --to-destination [::1]:8080' },
    ]);
  });
});

describe('TPROXY', () => {
  it('--on-port with the --on-ip and --tproxy-mark iptables-save always prints ends the table', () => {
    expect(
      actionsOf(
        '-A PREROUTING -p tcp -j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x539/0xffffffff',
        mangle,
      ),
    ).toEqual([{ kind: 'tproxy', port: 15006, terminal: true }]);
    expect(
      actionsOf('-A PREROUTING -p tcp -j TPROXY --on-port 15006 --on-ip :: --tproxy-mark 0x539/0xffffffff', {
        ...mangle,
        ...v6,
      }),
    ).toEqual([{ kind: 'tproxy', port: 15006, terminal: true }]);
  });

  it('no --on-port, a range, or another option is unknown', () => {
    expect(actionsOf('-A PREROUTING -p tcp -j TPROXY --on-ip 0.0.0.0 --tproxy-mark 0x1/0x1', mangle)).toEqual([
      { kind: 'unknown', text: '-j TPROXY --on-ip 0.0.0.0 --tproxy-mark 0x1/0x1' },
    ]);
    expect(actionsOf('-A PREROUTING -p tcp -j TPROXY --on-port 15006-15007 --on-ip 0.0.0.0', mangle)).toEqual([
      { kind: 'unknown', text: '-j TPROXY --on-port 15006-15007 --on-ip 0.0.0.0' },
    ]);
    expect(actionsOf('-A PREROUTING -p tcp -j TPROXY --on-port 15006 --random', mangle)).toEqual([
      { kind: 'unknown', text: '-j TPROXY --on-port 15006 --random' },
    ]);
  });
});

describe('MARK and CONNMARK', () => {
  it('MARK --set-xmark VALUE/MASK as iptables-save prints it, and --set-mark VALUE as iptables-restore takes it', () => {
    expect(actionsOf('-A OUTPUT -j MARK --set-xmark 0x539/0xffffffff', mangle)).toEqual([
      { kind: 'set-mark', value: 0x539, mask: 0xffffffff },
    ]);
    expect(actionsOf('-A OUTPUT -j MARK --set-xmark 0x0/0xfffffffa', mangle)).toEqual([
      { kind: 'set-mark', value: 0, mask: 0xfffffffa },
    ]);
    expect(actionsOf('-A OUTPUT -j MARK --set-mark 0x539', mangle)).toEqual([
      { kind: 'set-mark', value: 0x539, mask: 0xffffffff },
    ]);
  });

  it('MARK with a second option, a flag, or a value that is not a mark is unknown', () => {
    expect(actionsOf('-A OUTPUT -j MARK --set-xmark 0x1/0x1 --set-mark 0x2', mangle)).toEqual([
      { kind: 'unknown', text: '-j MARK --set-xmark 0x1/0x1 --set-mark 0x2' },
    ]);
    expect(actionsOf('-A OUTPUT -j MARK --set-xmark 0x1/0x1 --random', mangle)).toEqual([
      { kind: 'unknown', text: '-j MARK --set-xmark 0x1/0x1 --random' },
    ]);
    expect(actionsOf('-A OUTPUT -j MARK --and-mark 0x5', mangle)).toEqual([
      { kind: 'unknown', text: '-j MARK --and-mark 0x5' },
    ]);
    expect(actionsOf('-A OUTPUT -j MARK --set-xmark 0x1/0x1/0x1', mangle)).toEqual([
      { kind: 'unknown', text: '-j MARK --set-xmark 0x1/0x1/0x1' },
    ]);
    expect(actionsOf('-A OUTPUT -j MARK --set-xmark mark', mangle)).toEqual([
      { kind: 'unknown', text: '-j MARK --set-xmark mark' },
    ]);
  });

  it('CONNMARK --save-mark / --restore-mark with full masks, as iptables-save prints them or as iptables-restore takes them', () => {
    expect(
      actionsOf(
        '-A PREROUTING -p tcp -m mark --mark 0x539 -j CONNMARK --save-mark --nfmask 0xffffffff --ctmask 0xffffffff',
        mangle,
      )[0],
    ).toEqual({ kind: 'save-mark' });
    expect(
      actionsOf(
        '-A OUTPUT -p tcp -m connmark --mark 0x539 -j CONNMARK --restore-mark --nfmask 0xffffffff --ctmask 0xffffffff',
        mangle,
      )[0],
    ).toEqual({ kind: 'restore-mark' });
    expect(actionsOf('-A OUTPUT -j CONNMARK --save-mark', mangle)).toEqual([{ kind: 'save-mark' }]);
    expect(actionsOf('-A OUTPUT -j CONNMARK --restore-mark --mask 0xffffffff', mangle)).toEqual([
      { kind: 'restore-mark' },
    ]);
  });

  it('CONNMARK with any mask not all ones, with --set-xmark, or with two flags is unknown', () => {
    const unknown = (options: string): unknown => [{ kind: 'unknown', text: `-j CONNMARK ${options}` }];
    expect(actionsOf('-A OUTPUT -j CONNMARK --restore-mark --nfmask 0xff --ctmask 0xffffffff', mangle)).toEqual(
      unknown('--restore-mark --nfmask 0xff --ctmask 0xffffffff'),
    );
    expect(actionsOf('-A OUTPUT -j CONNMARK --restore-mark --nfmask 0xffffffff --ctmask 0xff', mangle)).toEqual(
      unknown('--restore-mark --nfmask 0xffffffff --ctmask 0xff'),
    );
    expect(actionsOf('-A OUTPUT -j CONNMARK --restore-mark --mask 0xff', mangle)).toEqual(
      unknown('--restore-mark --mask 0xff'),
    );
    expect(actionsOf('-A OUTPUT -j CONNMARK --set-xmark 0x1/0xffffffff', mangle)).toEqual(
      unknown('--set-xmark 0x1/0xffffffff'),
    );
    expect(actionsOf('-A OUTPUT -j CONNMARK --save-mark --restore-mark', mangle)).toEqual(
      unknown('--save-mark --restore-mark'),
    );
    expect(actionsOf('-A OUTPUT -j CONNMARK --set-xmark', mangle)).toEqual(unknown('--set-xmark'));
  });
});

describe('targets that never decide where a packet goes', () => {
  it('CT with a zone, a helper or an event mask, LOG, NFLOG and TRACE continue, named', () => {
    expect(
      actionsOf('-A OUTPUT -p udp -m udp --dport 53 -m owner --uid-owner 1337 -j CT --zone 1', { table: 'raw' }),
    ).toEqual([{ kind: 'continue', what: 'CT --zone 1' }]);
    expect(actionsOf('-A OUTPUT -j CT --helper ftp', { table: 'raw' })).toEqual([
      { kind: 'continue', what: 'CT --helper ftp' },
    ]);
    expect(actionsOf('-A OUTPUT -j CT --ctevents new,destroy --zone 3', { table: 'raw' })).toEqual([
      { kind: 'continue', what: 'CT --ctevents new,destroy --zone 3' },
    ]);
    expect(actionsOf('-A OUTPUT -j LOG --log-prefix "x y"')).toEqual([{ kind: 'continue', what: 'LOG' }]);
    expect(actionsOf('-A OUTPUT -j NFLOG --nflog-group 2', mangle)).toEqual([{ kind: 'continue', what: 'NFLOG' }]);
    expect(actionsOf('-A OUTPUT -j TRACE', { table: 'raw' })).toEqual([{ kind: 'continue', what: 'TRACE' }]);
  });

  it('NOTRACK and CT --notrack untrack the connection', () => {
    expect(actionsOf('-A OUTPUT -j CT --notrack', { table: 'raw' })).toEqual([{ kind: 'notrack' }]);
    expect(actionsOf('-A PREROUTING -p tcp -j NOTRACK', { table: 'raw' })).toEqual([{ kind: 'notrack' }]);
  });

  it('CT with anything else, or NOTRACK with options, is unknown', () => {
    for (const rest of [
      '--zone-orig 7',
      '--notrack --zone 1',
      '--timeout t',
      '--zone 1 --timeout t',
      '--zone',
      '--helper ftp --notrack',
      '',
    ]) {
      const target = `CT${rest ? ` ${rest}` : ''}`;
      expect(actionsOf(`-A OUTPUT -j ${target}`, { table: 'raw' }), target).toEqual([
        { kind: 'unknown', text: `-j ${target}` },
      ]);
    }
    expect(actionsOf('-A OUTPUT -j NOTRACK --x', { table: 'raw' })).toEqual([
      { kind: 'unknown', text: '-j NOTRACK --x' },
    ]);
  });

  it('a rule without a target continues; a target this reader does not know is unknown', () => {
    expect(actionsOf('-A OUTPUT -p tcp')).toEqual([{ kind: 'continue', what: 'no target' }]);
    expect(actionsOf('-A POSTROUTING -o eth0 -j MASQUERADE')).toEqual([{ kind: 'unknown', text: '-j MASQUERADE' }]);
    expect(actionsOf('-A POSTROUTING -o eth0 -j SNAT --to-source 10.0.0.1')).toEqual([
      { kind: 'unknown', text: '-j SNAT --to-source 10.0.0.1' },
    ]);
  });
});
