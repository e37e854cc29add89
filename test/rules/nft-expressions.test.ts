import { describe, expect, it } from 'vitest';
import { parseIp, type IpAddress } from '../../src/addr/ip.js';
import { ct, match, meta, payload, readRule, RETURN } from './nft-rule.js';

/**
 * The statements of a rule's `expr` list as nft 1.0.6 prints them (each one printed by nft from the
 * rule its test names), read into the model's actions; and what becomes of an expression the
 * engine cannot model: an unknown match or action quoting it, never a silent pass.
 */

const COUNTER = { counter: { packets: 0, bytes: 0 } };
const TCP = match('==', meta('l4proto'), 'tcp');
const tcpMatch = { kind: 'protocol', protocols: ['tcp'], negated: false } as const;

const ip = (text: string): IpAddress => {
  const parsed = parseIp(text);
  if (!parsed) throw new Error(text);
  return parsed;
};

/** The actions and text of `meta l4proto tcp counter STATEMENT`. */
function statement(body: unknown): { actions: unknown; text: string } {
  const rule = readRule([TCP, COUNTER, body]);
  expect(rule.matches).toEqual([tcpMatch]);
  return { actions: rule.actions, text: rule.text };
}

/** An unknown action quoting the statement, after the protocol match and the counter. */
const unknownStatement = (body: unknown): { actions: unknown; text: string } => ({
  actions: [{ kind: 'unknown', text: JSON.stringify(body) }],
  text: `meta l4proto tcp counter ${JSON.stringify(body)}`,
});

describe('nft statements: verdicts', () => {
  it('accept, drop and return', () => {
    expect(statement({ accept: null })).toEqual({
      actions: [{ kind: 'accept' }],
      text: 'meta l4proto tcp counter accept',
    });
    expect(statement({ drop: null })).toEqual({ actions: [{ kind: 'drop' }], text: 'meta l4proto tcp counter drop' });
    expect(statement(RETURN)).toEqual({ actions: [{ kind: 'return' }], text: 'meta l4proto tcp counter return' });
  });

  it('reject, with or without a type, drops', () => {
    expect(statement({ reject: { type: 'tcp reset' } })).toEqual({
      actions: [{ kind: 'drop' }],
      text: 'meta l4proto tcp counter reject',
    });
    expect(statement({ reject: { type: 'icmpx', expr: 'port-unreachable' } })).toEqual({
      actions: [{ kind: 'drop' }],
      text: 'meta l4proto tcp counter reject',
    });
  });

  it('jump and goto name their chain', () => {
    expect(statement({ jump: { target: 'istio-redirect' } })).toEqual({
      actions: [{ kind: 'jump', chain: 'istio-redirect' }],
      text: 'meta l4proto tcp counter jump istio-redirect',
    });
    expect(statement({ goto: { target: 'istio-redirect' } })).toEqual({
      actions: [{ kind: 'goto', chain: 'istio-redirect' }],
      text: 'meta l4proto tcp counter goto istio-redirect',
    });
  });

  it('a jump or goto without a chain name (nft never prints one) is an unknown action', () => {
    for (const body of [{ jump: {} }, { goto: { target: 7 } }, { jump: null }])
      expect(statement(body)).toEqual(unknownStatement(body));
  });
});

describe('nft statements: counters, logs and a rule without a verdict', () => {
  it('a counter only adds its word; log continues; notrack untracks', () => {
    expect(readRule([COUNTER, { log: { prefix: 'x' } }, { drop: null }])).toEqual({
      matches: [],
      actions: [{ kind: 'continue', what: 'log' }, { kind: 'drop' }],
      text: 'counter log drop',
    });
    expect(readRule([{ notrack: null }])).toEqual({
      matches: [],
      actions: [{ kind: 'notrack' }],
      text: 'notrack',
    });
  });

  it('a rule with no statement that decides continues: "no verdict"', () => {
    expect(readRule([TCP, COUNTER])).toEqual({
      matches: [tcpMatch],
      actions: [{ kind: 'continue', what: 'no verdict' }],
      text: 'meta l4proto tcp counter',
    });
    expect(readRule([])).toEqual({ matches: [], actions: [{ kind: 'continue', what: 'no verdict' }], text: '' });
  });

  it('the matches of several match expressions, in order', () => {
    const rule = readRule([
      match('==', meta('oifname'), 'lo'),
      match('!=', payload('ip', 'daddr'), '127.0.0.1'),
      match('==', meta('skuid'), 1337),
      COUNTER,
      { jump: { target: 'istio-in-redirect' } },
    ]);
    expect(rule.matches.map((one) => one.kind)).toEqual(['interface', 'address', 'owner']);
    expect(rule.text).toBe('oifname lo ip daddr != 127.0.0.1 meta skuid 1337 counter jump istio-in-redirect');
  });
});

describe('nft statements: redirect', () => {
  it("to a port, and to the packet's own port", () => {
    expect(statement({ redirect: { port: 15001 } })).toEqual({
      actions: [{ kind: 'redirect', port: 15001 }],
      text: 'meta l4proto tcp counter redirect to :15001',
    });
    expect(statement({ redirect: { port: 15001, flags: 'random' } })).toEqual({
      actions: [{ kind: 'redirect', port: 15001 }],
      text: 'meta l4proto tcp counter redirect to :15001',
    });
    expect(statement({ redirect: null })).toEqual({
      actions: [{ kind: 'redirect', port: undefined }],
      text: 'meta l4proto tcp counter redirect',
    });
  });

  it('to port 1 and to port 65535', () => {
    expect(statement({ redirect: { port: 1 } }).actions).toEqual([{ kind: 'redirect', port: 1 }]);
    expect(statement({ redirect: { port: 65535 } }).actions).toEqual([{ kind: 'redirect', port: 65535 }]);
  });

  it('to a port range or a port map: unknown actions', () => {
    for (const body of [
      { redirect: { port: { range: [15001, 15002] } } },
      { redirect: { port: { map: { key: payload('tcp', 'dport'), data: { set: [[84, 15001]] } } } } },
    ]) {
      expect(statement(body)).toEqual(unknownStatement(body));
    }
  });

  it('to ports nft would never print (0, 65536, 1.5) is refused: unknown actions', () => {
    for (const port of [0, 65536, 1.5]) {
      const body = { redirect: { port } };
      expect(statement(body), String(port)).toEqual(unknownStatement(body));
    }
  });
});

describe('nft statements: tproxy', () => {
  it("to a port: a tproxy that does not end the table (nft's tproxy is no verdict)", () => {
    expect(statement({ tproxy: { family: 'ip', port: 15006 } })).toEqual({
      actions: [{ kind: 'tproxy', port: 15006, terminal: false }],
      text: 'meta l4proto tcp counter tproxy to :15006',
    });
    expect(statement({ tproxy: { family: 'ip', addr: '127.0.0.1', port: 15006 } }).actions).toEqual([
      { kind: 'tproxy', port: 15006, terminal: false },
    ]);
  });

  it('to an address only, or to no port at all: unknown actions', () => {
    for (const body of [{ tproxy: { family: 'ip', addr: '127.0.0.1' } }, { tproxy: null }])
      expect(statement(body)).toEqual(unknownStatement(body));
  });
});

describe('nft statements: dnat', () => {
  it('to an address and port, to an address, to an IPv6 address', () => {
    expect(statement({ dnat: { addr: '10.0.0.1', port: 8080 } })).toEqual({
      actions: [{ kind: 'dnat', address: ip('10.0.0.1'), port: 8080 }],
      text: 'meta l4proto tcp counter dnat to {"addr":"10.0.0.1","port":8080}',
    });
    expect(statement({ dnat: { family: 'ip', addr: '10.0.0.2' } }).actions).toEqual([
      { kind: 'dnat', address: ip('10.0.0.2'), port: undefined },
    ]);
    expect(statement({ dnat: { family: 'ip6', addr: 'fd00::1', port: 8080 } }).actions).toEqual([
      { kind: 'dnat', address: ip('fd00::1'), port: 8080 },
    ]);
  });

  it('to a port only (`dnat to :8080`): the address stays', () => {
    expect(statement({ dnat: { port: 8080 } })).toEqual({
      actions: [{ kind: 'dnat', address: undefined, port: 8080 }],
      text: 'meta l4proto tcp counter dnat to {"port":8080}',
    });
  });

  it('to an address range, an address map or a port range: unknown actions', () => {
    for (const body of [
      { dnat: { addr: { range: ['10.0.0.1', '10.0.0.9'] } } },
      { dnat: { addr: { map: { key: payload('tcp', 'dport'), data: { set: [[82, '10.0.0.1']] } } } } },
      { dnat: { addr: '10.0.0.1', port: { range: [8080, 8090] } } },
    ]) {
      expect(statement(body)).toEqual(unknownStatement(body));
    }
  });

  it('to an address that is not one, or with no body (nft never prints either): unknown actions', () => {
    for (const body of [{ dnat: { addr: 'pod.local' } }, { dnat: null }])
      expect(statement(body)).toEqual(unknownStatement(body));
  });
});

describe('nft statements: marks (mangle)', () => {
  const mangle = (key: unknown, value: unknown): unknown => ({ mangle: { key, value } });

  it('meta mark set VALUE sets the whole mark, shown in hex', () => {
    expect(statement(mangle(meta('mark'), 1337))).toEqual({
      actions: [{ kind: 'set-mark', value: 1337, mask: 0xffffffff }],
      text: 'meta l4proto tcp counter meta mark set 0x539',
    });
    expect(statement(mangle(meta('mark'), 0))).toEqual({
      actions: [{ kind: 'set-mark', value: 0, mask: 0xffffffff }],
      text: 'meta l4proto tcp counter meta mark set 0x0',
    });
    expect(statement(mangle(meta('mark'), 4294967295))).toEqual({
      actions: [{ kind: 'set-mark', value: 4294967295, mask: 0xffffffff }],
      text: 'meta l4proto tcp counter meta mark set 0xffffffff',
    });
  });

  it('meta mark set ct mark restores, ct mark set meta mark saves', () => {
    expect(statement(mangle(meta('mark'), ct('mark')))).toEqual({
      actions: [{ kind: 'restore-mark' }],
      text: 'meta l4proto tcp counter meta mark set ct mark',
    });
    expect(statement(mangle(ct('mark'), meta('mark')))).toEqual({
      actions: [{ kind: 'save-mark' }],
      text: 'meta l4proto tcp counter ct mark set mark',
    });
  });

  it('ct zone set continues', () => {
    expect(statement(mangle(ct('zone'), 1))).toEqual({
      actions: [{ kind: 'continue', what: 'ct zone set' }],
      text: 'meta l4proto tcp counter ct zone set',
    });
  });

  it('other mark statements are unknown actions: ct mark set VALUE, mark or-ed, meta priority, ct mark set ct mark, meta mark set meta mark', () => {
    for (const body of [
      mangle(ct('mark'), 1),
      mangle(meta('mark'), { '|': [meta('mark'), 16] }),
      mangle(meta('priority'), '0:1'),
      mangle(ct('mark'), ct('mark')),
      mangle(meta('mark'), meta('mark')),
      { mangle: null },
    ]) {
      expect(statement(body)).toEqual(unknownStatement(body));
    }
  });
});

describe('nft statements: what the engine does not model', () => {
  it("iptables-nft's xt matches and targets: unknown, named by type and extension", () => {
    expect(
      readRule([TCP, { xt: { type: 'match', name: 'owner' } }, COUNTER, { xt: { type: 'target', name: 'REDIRECT' } }]),
    ).toEqual({
      matches: [tcpMatch, { kind: 'unknown', text: 'xt match owner' }],
      actions: [{ kind: 'unknown', text: 'xt target REDIRECT' }],
      text: 'meta l4proto tcp xt match owner counter xt target REDIRECT',
    });
  });

  it('an xt expression without a body (nft never prints one) is an unknown action', () => {
    expect(statement({ xt: null })).toEqual({
      actions: [{ kind: 'unknown', text: 'xt undefined ?' }],
      text: 'meta l4proto tcp counter xt undefined ?',
    });
  });

  it('masquerade, snat, limit and a verdict map are unknown actions', () => {
    for (const body of [
      { masquerade: null },
      { snat: { family: 'ip', addr: '10.0.0.1' } },
      { limit: { rate: 10, burst: 5, per: 'second' } },
      { vmap: { key: meta('l4proto'), data: { set: [['tcp', RETURN]] } } },
    ]) {
      expect(statement(body)).toEqual(unknownStatement(body));
    }
  });

  it('a match nft cannot have printed is an unknown match, not an action', () => {
    const body = match('==', meta('cpu'), 1);
    expect(readRule([body, RETURN])).toEqual({
      matches: [{ kind: 'unknown', text: JSON.stringify(body) }],
      actions: [{ kind: 'return' }],
      text: `${JSON.stringify(body)} return`,
    });
    expect(readRule([{ match: null }, RETURN])).toEqual({
      matches: [{ kind: 'unknown', text: '{"match":null}' }],
      actions: [{ kind: 'return' }],
      text: '{"match":null} return',
    });
  });

  it('an expression that is not an object, or an empty object, is unknown', () => {
    expect(readRule([null, 'accept', RETURN])).toEqual({
      matches: [
        { kind: 'unknown', text: 'null' },
        { kind: 'unknown', text: '"accept"' },
      ],
      actions: [{ kind: 'return' }],
      text: 'null "accept" return',
    });
    expect(readRule([[], RETURN])).toEqual({
      matches: [{ kind: 'unknown', text: '[]' }],
      actions: [{ kind: 'return' }],
      text: '[] return',
    });
    expect(readRule([{}])).toEqual({ matches: [], actions: [{ kind: 'unknown', text: '{}' }], text: '{}' });
  });

  it('a statement named after an Object method is unknown, not called', () => {
    expect(readRule([{ toString: null }, { constructor: null }])).toEqual({
      matches: [],
      actions: [
        { kind: 'unknown', text: '{"toString":null}' },
        { kind: 'unknown', text: '{"constructor":null}' },
      ],
      text: '{"toString":null} {"constructor":null}',
    });
  });

  it('an unknown expression is quoted whole up to 120 characters, then cut at 117 with "..."', () => {
    const vmap = (target: string): unknown => ({
      vmap: { key: payload('tcp', 'dport'), data: { set: [[80, { jump: { target } }]] } },
    });
    const exact = vmap('istio-output');
    expect(readRule([exact]).actions).toEqual([
      {
        kind: 'unknown',
        text: '{"vmap":{"key":{"payload":{"protocol":"tcp","field":"dport"}},"data":{"set":[[80,{"jump":{"target":"istio-output"}}]]}}}',
      },
    ]);
    expect(readRule([vmap('istio-inbound')]).actions).toEqual([
      {
        kind: 'unknown',
        text: '{"vmap":{"key":{"payload":{"protocol":"tcp","field":"dport"}},"data":{"set":[[80,{"jump":{"target":"istio-inbound"}}]...',
      },
    ]);
  });
});
