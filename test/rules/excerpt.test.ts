import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import { CORPUS } from '../explain/corpus.js';

/** A dump whose head was lost (a read that began mid-stream): it starts at `rule`, outside any table. */
function headless(dir: string, rule: string): string {
  const text = readFileSync(path.join(CORPUS, dir, 'iptables-nft-save.v4.txt'), 'utf8');
  const start = text.indexOf(`${rule}\n`);
  if (start < 0) throw new Error(`${dir} has no line ${rule}`);
  return text.slice(start);
}

function messageFor(dir: string, rule: string): string {
  const result = parseIptablesSave(headless(dir, rule), {
    backend: 'iptables-nft',
    family: 'ipv4',
    source: 'iptables-nft-save',
  });
  expect(result.ok).toBe(false);
  if (result.ok) return '';
  expect(result.error).toMatchObject({ reason: 'RulesUnparseable', source: 'iptables-nft-save', line: 1 });
  return result.error.message;
}

describe('a rule line outside a table is quoted whole up to 80 characters, cut to 77 and "..." beyond', () => {
  it('a short rule is quoted whole', () => {
    expect(messageFor('istio/empty', '-A OUTPUT -j ISTIO_OUTPUT')).toBe(
      '"-A OUTPUT -j ISTIO_OUTPUT" appears outside a table (expected *table first)',
    );
  });

  it('a rule of exactly 80 characters is quoted whole', () => {
    const rule = '-A ISTIO_OUTPUT -m owner ! --gid-owner 1001 -m owner ! --gid-owner 202 -j RETURN';
    expect(rule).toHaveLength(80);
    expect(messageFor('istio/outbound-owner-groups', rule)).toBe(
      `"${rule}" appears outside a table (expected *table first)`,
    );
  });

  it('a rule of 82 characters is cut to its first 77 and "..."', () => {
    const rule = '-A ISTIO_INBOUND -p tcp -m conntrack --ctstate RELATED,ESTABLISHED -j ISTIO_DIVERT';
    expect(rule).toHaveLength(82);
    expect(messageFor('istio/tproxy', rule)).toBe(
      '"-A ISTIO_INBOUND -p tcp -m conntrack --ctstate RELATED,ESTABLISHED -j ISTIO_D..." appears outside a table (expected *table first)',
    );
  });
});
