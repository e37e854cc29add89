import { describe, expect, it } from 'vitest';
import { PRESETS } from '../../src/config/interception.js';
import { analyzeDumps } from '../../src/rules-check/analyze.js';

// Expectations speak of packets as they arrive; a rule that sets the packet mark on the way must
// not move a region out of every expectation (it would then be checked against none and pass).
const linkerd = (mangle: string[], inbound: string[]) =>
  [
    '*mangle',
    ':PREROUTING ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ...mangle,
    'COMMIT',
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':PROXY_INIT_REDIRECT - [0:0]',
    ':PROXY_INIT_OUTPUT - [0:0]',
    '-A PREROUTING -j PROXY_INIT_REDIRECT',
    '-A OUTPUT -j PROXY_INIT_OUTPUT',
    ...inbound,
    '-A PROXY_INIT_OUTPUT -m owner --uid-owner 2102 -j RETURN',
    '-A PROXY_INIT_OUTPUT -o lo -j RETURN',
    '-A PROXY_INIT_OUTPUT -p tcp -j REDIRECT --to-ports 4140',
    'COMMIT',
    '',
  ].join('\n');

function status(text: string) {
  const analysis = analyzeDumps(
    PRESETS.linkerd.spec,
    [{ backend: 'iptables-nft', family: 'ipv4', source: 'marks', text }],
    { families: ['ipv4'] },
  );
  if (analysis.kind !== 'checked') throw new Error('the table must parse');
  return analysis.check;
}

const capture = [
  '-A PROXY_INIT_REDIRECT -p tcp -m multiport --dports 4190,4191 -j RETURN',
  '-A PROXY_INIT_REDIRECT -p tcp -j REDIRECT --to-ports 4143',
];
const setMark = ['-A PREROUTING -p tcp -j MARK --set-xmark 0x539/0xffffffff'];

describe('regions whose mark the rules rewrite', () => {
  it('a mark set in mangle does not hide missing inbound capture', () => {
    const check = status(linkerd(setMark, ['-A PROXY_INIT_REDIRECT -p tcp -j RETURN']));
    expect(check.status).toBe('failed');
    expect(check.findings.some((finding) => finding.expectation.id === 'ipv4/inbound/app')).toBe(true);
  });

  it('with capture in place the same mark rule passes, and the inbound expectation saw the redirect', () => {
    const check = status(linkerd(setMark, capture));
    expect(check.status).toBe('passed');
    const app = check.answers.find((answer) => answer.expectation.id === 'ipv4/inbound/app');
    expect(app?.outcomes.map((seen) => seen.outcome)).toEqual([{ kind: 'redirect', port: 4143 }]);
  });
});
