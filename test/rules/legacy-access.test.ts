import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Family } from '../../src/addr/ip.js';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import { decideInspection, hasCaptureRules } from '../../src/rules-check/decide.js';
import { fail, ok } from '../../src/reason/result.js';
import { capabilitiesFromStatus } from '../../src/rules/read/capabilities.js';
import { classifyToolRun, legacyListingOf, type ReadOutcome } from '../../src/rules/read/classify.js';
import { CORPUS, flagsFor, loadManifest } from '../explain/corpus.js';
import { specFromFlags } from '../harness/spec.js';

const spec = specFromFlags;

const corpus = (dir: string, file: string): string => readFileSync(path.join(CORPUS, dir, file), 'utf8');
const LINKERD = corpus('linkerd/cni-default', 'iptables-nft-save.v4.txt');
const LINKERD_NFT_JSON = corpus('linkerd/cni-default', 'nft-list-ruleset.json');
const ISTIO_NATIVE_TPROXY = corpus('istio-nftables/tproxy', 'nft-list-ruleset.json');
/** What `nft -j list ruleset` prints in a namespace without nf_tables rules. */
const EMPTY_NFT =
  '{"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}}]}';

const linkerd = spec(['--mesh=linkerd']);
const tproxyCase = loadManifest().find((testCase) => testCase.dir === 'istio-nftables/tproxy');
if (!tproxyCase) throw new Error('corpus case istio-nftables/tproxy is missing');
const istioTproxy = spec(flagsFor(tproxyCase).argv);

const nftSave = (text: string, family: Family = 'ipv4'): ReadOutcome => ({
  kind: 'read',
  dump: { backend: 'iptables-nft', family, source: `${family === 'ipv4' ? 'iptables' : 'ip6tables'}-nft-save`, text },
});
const legacySave = (text: string): ReadOutcome => ({
  kind: 'read',
  dump: { backend: 'iptables-legacy', family: 'ipv4', source: 'iptables-legacy-save', text },
});
const nftJson = (text: string): ReadOutcome => ({
  kind: 'read',
  dump: { backend: 'nftables', source: 'nft -j list ruleset', text },
});
const notListable = (family: Family = 'ipv4', uid = 65534): ReadOutcome => ({
  kind: 'not-listable',
  command: `${family === 'ipv4' ? 'iptables' : 'ip6tables'}-legacy-save`,
  family,
  path: family === 'ipv4' ? '/proc/net/ip_tables_names' : '/proc/net/ip6_tables_names',
  uid,
  why: 'EACCES',
});
const skippedLegacy: ReadOutcome = {
  kind: 'skipped',
  command: 'iptables-legacy-save',
  why: 'no legacy ipv4 tables in /proc/net',
};

const auto = { families: ['ipv4'] as Family[], mode: 'auto' as const };
const required = { families: ['ipv4'] as Family[], mode: 'required' as const };

describe('legacy table names: not listable is not "no legacy tables"', () => {
  it('ENOENT (x_tables not loaded) and an empty file mean no legacy rules', () => {
    expect(legacyListingOf('ipv4', fail('ENOENT', 'no such file')).kind).toBe('none');
    expect(legacyListingOf('ipv6', ok('')).kind).toBe('none');
    expect(legacyListingOf('ipv4', ok('\n')).kind).toBe('none');
  });

  it('EACCES, EPERM and any other error mean the legacy backend was not listed', () => {
    expect(legacyListingOf('ipv4', fail('EACCES', 'permission denied'))).toEqual({
      kind: 'not-listable',
      why: 'EACCES',
    });
    expect(legacyListingOf('ipv6', fail('EPERM', 'operation not permitted'))).toEqual({
      kind: 'not-listable',
      why: 'EPERM',
    });
    expect(legacyListingOf('ipv4', fail('EIO', 'i/o error')).kind).toBe('not-listable');
    expect(legacyListingOf('ipv4', fail('odd failure', 'odd failure'))).toEqual({
      kind: 'not-listable',
      why: 'odd failure',
    });
  });

  it('listed tables are read', () => {
    expect(legacyListingOf('ipv4', ok('nat\nmangle\n'))).toEqual({ kind: 'tables', names: ['nat', 'mangle'] });
  });
});

describe('a save command is read only when it really listed the tables', () => {
  const legacy = { label: 'iptables-legacy-save', backend: 'iptables-legacy' as const, family: 'ipv4' as const };
  const nft = { label: 'iptables-nft-save', backend: 'iptables-nft' as const, family: 'ipv4' as const };

  it('iptables-legacy-save exiting 0 with "Failed to list table names" on stderr is unreadable, not an empty dump', () => {
    const outcome = classifyToolRun(legacy, {
      timedOut: false,
      exitCode: 0,
      stdout: '',
      stderr: 'Failed to list table names in /proc/net/ip_tables_names: Permission denied\n',
      elapsedMs: 1,
    });
    expect(outcome.kind).toBe('unreadable');
    expect(outcome.kind === 'unreadable' && outcome.why).toMatch(/Failed to list table names/);
  });

  it('the same failure with a non-zero exit is unreadable and names the stderr line', () => {
    const outcome = classifyToolRun(legacy, {
      timedOut: false,
      exitCode: 1,
      stdout: '',
      stderr: 'Failed to list table names in /proc/net/ip_tables_names: Permission denied\n',
      elapsedMs: 1,
    });
    expect(outcome).toEqual({
      kind: 'unreadable',
      command: 'iptables-legacy-save',
      why: 'exit 1: Failed to list table names in /proc/net/ip_tables_names: Permission denied',
    });
  });

  it('a warning on stderr with exit 0 is still a dump', () => {
    const outcome = classifyToolRun(nft, {
      timedOut: false,
      exitCode: 0,
      stdout: LINKERD,
      stderr: '# Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n',
      elapsedMs: 1,
    });
    expect(outcome.kind).toBe('read');
    expect(outcome.kind === 'read' && outcome.dump).toEqual({
      backend: 'iptables-nft',
      family: 'ipv4',
      source: 'iptables-nft-save',
      text: LINKERD,
    });
  });

  it('a missing tool is absent; a timeout is unreadable', () => {
    expect(
      classifyToolRun(nft, {
        code: 'ENOENT',
        timedOut: false,
        exitCode: undefined,
        stdout: '',
        stderr: '',
        elapsedMs: 1,
      }),
    ).toEqual({ kind: 'absent', command: 'iptables-nft-save' });
    expect(classifyToolRun(nft, { timedOut: true, exitCode: undefined, stdout: '', stderr: '', elapsedMs: 1 })).toEqual(
      {
        kind: 'unreadable',
        command: 'iptables-nft-save',
        why: 'timed out after 1 ms having printed 0 bytes; the partial output was not analysed',
      },
    );
  });
});

describe('decision when the legacy backend cannot be listed', () => {
  it('nf_tables empty, auto: not inspected, saying why, never passed', () => {
    const result = decideInspection(linkerd, [nftSave(''), nftJson(EMPTY_NFT), notListable()], auto);
    expect(result.status).toBe('not-inspected');
    expect(result.reason).toBe('RulesNotInspected');
    expect(result.message).toMatch(/legacy iptables tables cannot be listed by uid 65534 without root/);
    expect(result.message).toMatch(/\/proc\/net\/ip_tables_names is root-only/);
    expect(result.message).toMatch(/nf_tables holds no capture rules/);
    expect(result.message).toMatch(/run the validator as root \(uid 0\) with CAP_NET_ADMIN/);
    expect(result.message).not.toMatch(/no chain is hooked/);
    expect(result.report).toMatchObject({ legacy: { listable: false, families: ['ipv4'], uid: 65534 } });
  });

  it('nf_tables empty, required: unreadable with the same explanation', () => {
    const result = decideInspection(linkerd, [nftSave(''), nftJson(EMPTY_NFT), notListable()], required);
    expect(result.status).toBe('unreadable');
    expect(result.reason).toBe('RulesUnreadable');
    expect(result.message).toMatch(
      /legacy iptables tables cannot be listed by uid 65534 without root: \/proc\/net\/ip_tables_names is root-only.*nf_tables holds no capture rules/,
    );
  });

  it('no nf_tables tool installed at all: still the legacy explanation, not "nothing installed"', () => {
    const outcomes: ReadOutcome[] = [
      { kind: 'absent', command: 'iptables-nft-save' },
      { kind: 'absent', command: 'nft -j list ruleset' },
      notListable(),
    ];
    const result = decideInspection(linkerd, outcomes, auto);
    expect(result.status).toBe('not-inspected');
    expect(result.message).toMatch(/legacy iptables tables cannot be listed/);
  });

  it('only filter rules in nf_tables are not capture rules', () => {
    const filterOnly = [
      '*filter',
      ':INPUT ACCEPT [0:0]',
      ':FORWARD ACCEPT [0:0]',
      ':OUTPUT ACCEPT [0:0]',
      '-A OUTPUT -p tcp --dport 25 -j DROP',
      'COMMIT',
      '',
    ].join('\n');
    const result = decideInspection(linkerd, [nftSave(filterOnly), nftJson(EMPTY_NFT), notListable()], auto);
    expect(result.status).toBe('not-inspected');
  });

  it('nf_tables holds correct capture rules: analysed and passed, saying legacy was not listed', () => {
    const result = decideInspection(linkerd, [nftSave(LINKERD), nftJson(EMPTY_NFT), notListable()], auto);
    expect(result.status).toBe('passed');
    expect(result.message).toMatch(/\(iptables-nft; legacy iptables not listable by uid 65534, not checked\)/);
    expect(
      result.evidence.some((line) =>
        /legacy iptables tables \(IPv4\) could not be listed by uid 65534.*only the nf_tables rules were checked/.test(
          line,
        ),
      ),
    ).toBe(true);
    expect(result.report).toMatchObject({ legacy: { listable: false }, status: 'passed' });
  });

  it('nf_tables holds wrong capture rules: the mismatch stays a mismatch, with the legacy note', () => {
    const result = decideInspection(
      linkerd,
      [nftSave(LINKERD.replace('--to-ports 4140', '--to-ports 4141')), nftJson(EMPTY_NFT), notListable()],
      required,
    );
    expect(result.status).toBe('failed');
    expect(result.reason).toBe('RulesMismatch');
    expect(result.message).toMatch(/4141/);
    expect(result.evidence.at(-1)).toMatch(/legacy iptables tables \(IPv4\) could not be listed/);
  });

  it('native nftables capture rules (nft -j only) count, mangle-priority TPROXY too', () => {
    // iptables-nft's tables seen only through nft -j carry xt expressions: unknown, but inspected.
    const linkerdJson = decideInspection(linkerd, [nftSave(''), nftJson(LINKERD_NFT_JSON), notListable()], auto);
    expect(linkerdJson.status).toBe('unknown');
    const tproxy = parseNftJson(ISTIO_NATIVE_TPROXY, 'nft');
    if (!tproxy.ok) throw new Error(tproxy.error.message);
    expect(hasCaptureRules(tproxy.tables, 'ipv4')).toBe(true);
    const decided = decideInspection(istioTproxy, [nftJson(ISTIO_NATIVE_TPROXY), notListable()], auto);
    expect(decided.status).toBe('passed');
  });

  it('capture rules are per family: IPv4 captured in nf_tables, IPv6 not, both unlisted → not inspected for IPv6', () => {
    const families: Family[] = ['ipv4', 'ipv6'];
    const result = decideInspection(
      linkerd,
      [nftSave(LINKERD), nftSave('', 'ipv6'), nftJson(EMPTY_NFT), notListable('ipv4'), notListable('ipv6')],
      { families, mode: 'auto' },
    );
    expect(result.status).toBe('not-inspected');
    expect(result.message).toMatch(/\/proc\/net\/ip_tables_names and \/proc\/net\/ip6_tables_names are root-only/);
    expect(result.message).toMatch(/no capture rules \(nat\/mangle PREROUTING\/OUTPUT\) for IPv6;/);
  });

  it('hasCaptureRules: mangle PREROUTING counts, raw and filter do not, empty base chains do not', () => {
    const tables = (text: string) => {
      const parsed = parseIptablesSave(text, { backend: 'iptables-nft', family: 'ipv4', source: 't' });
      if (!parsed.ok) throw new Error(parsed.error.message);
      return parsed.tables;
    };
    expect(
      hasCaptureRules(
        tables(
          '*mangle\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -p tcp -j TPROXY --on-port 15006 --tproxy-mark 0x1/0x1\nCOMMIT\n',
        ),
        'ipv4',
      ),
    ).toBe(true);
    expect(
      hasCaptureRules(tables('*raw\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p udp -j CT --zone 1\nCOMMIT\n'), 'ipv4'),
    ).toBe(false);
    expect(hasCaptureRules(tables('*nat\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n'), 'ipv4')).toBe(
      false,
    );
    expect(hasCaptureRules(tables('*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -j RETURN\nCOMMIT\n'), 'ipv6')).toBe(false);
  });

  it('a failed read still fails closed, and mentions the unlisted legacy backend', () => {
    const result = decideInspection(
      linkerd,
      [{ kind: 'unreadable', command: 'nft -j list ruleset', why: 'exit 1' }, nftSave(LINKERD), notListable()],
      auto,
    );
    expect(result.status).toBe('not-inspected');
    expect(result.evidence.some((line) => /legacy iptables tables \(IPv4\) could not be listed/.test(line))).toBe(true);
  });
});

describe('decision when the legacy backend was listed or is absent (unchanged)', () => {
  it('legacy listed and read: its rules are checked', () => {
    const result = decideInspection(linkerd, [nftSave(''), nftJson(EMPTY_NFT), legacySave(LINKERD)], auto);
    expect(result.status).toBe('passed');
    expect(result.message).toMatch(/\(iptables-legacy\)$/);
    expect(result.report).not.toHaveProperty('legacy');
  });

  it('no legacy tables and no nf_tables rules: a real mismatch, not "not inspected"', () => {
    const result = decideInspection(linkerd, [nftSave(''), nftJson(EMPTY_NFT), skippedLegacy], auto);
    expect(result.status).toBe('failed');
    expect(result.reason).toBe('RulesMismatch');
  });

  it('nothing installed and nothing legacy: cannot read', () => {
    const result = decideInspection(
      linkerd,
      [
        { kind: 'absent', command: 'iptables-nft-save' },
        { kind: 'absent', command: 'nft -j list ruleset' },
        skippedLegacy,
      ],
      required,
    );
    expect(result.status).toBe('unreadable');
    expect(result.message).toMatch(/neither iptables-save nor nft is installed/);
  });
});

describe('the capability mask decides whether rules are read', () => {
  it('CapEff bit 12 is NET_ADMIN and bit 13 NET_RAW', () => {
    expect(capabilitiesFromStatus('Name:\tnode\nCapEff:\t0000000000003000\n')).toEqual({
      netAdmin: true,
      netRaw: true,
      setIds: false,
    });
    expect(capabilitiesFromStatus('CapEff:\t0000000000001000\n')).toEqual({
      netAdmin: true,
      netRaw: false,
      setIds: false,
    });
    expect(capabilitiesFromStatus('CapEff:\t0000000000002000\n')).toEqual({
      netAdmin: false,
      netRaw: true,
      setIds: false,
    });
    expect(capabilitiesFromStatus('CapEff:\t0000000000000000\n')).toEqual({
      netAdmin: false,
      netRaw: false,
      setIds: false,
    });
  });

  it('switching identity needs both CAP_SETUID (bit 7) and CAP_SETGID (bit 6)', () => {
    expect(capabilitiesFromStatus('CapEff:\t00000000000000c0\n')?.setIds).toBe(true);
    expect(capabilitiesFromStatus('CapEff:\t0000000000000080\n')?.setIds).toBe(false);
    expect(capabilitiesFromStatus('CapEff:\t0000000000000040\n')?.setIds).toBe(false);
  });

  it('no CapEff line is no answer, never "capable"', () => {
    expect(capabilitiesFromStatus('Name:\tnode\n')).toBeUndefined();
  });
});
