/**
 * Mutants of istio-cni's ambient rules that each open a bypass, over iptables-save text (as the
 * kernel prints it back) or over the golden's `nft -f` text. Each says which packet it lets
 * through (the kernel test sends one) and what a failing report must name to count as naming it.
 */
export type Leak = 'outbound' | 'inbound' | 'dns';

export interface AmbientMutant {
  readonly name: string;
  readonly leak: Leak;
  readonly text: string;
  readonly mustName: string;
}

/** A missing rule has no text of its own: the report names the region that now misses it. */
const DNS_MISSED = 'expected redirected to local port 15053 because UDP DNS';

interface Edit {
  readonly name: string;
  readonly leak: Leak;
  readonly apply: (lines: string[]) => { lines: string[]; mustName: string } | undefined;
}

type LineTest = (line: string, index: number) => boolean;

/** Replaces the first match; the report quotes the rule as the tool prints it, so `printed` may name it instead. */
function replaceIn(lines: string[], test: LineTest, from: RegExp, to: string, printed?: string) {
  const index = lines.findIndex((line, i) => test(line, i) && from.test(line));
  if (index < 0) return undefined;
  const out = [...lines];
  const mutated = (lines[index] as string).replace(from, to);
  out[index] = mutated;
  return { lines: out, mustName: printed ?? mutated };
}

function removeWhere(lines: string[], test: LineTest, mustName: string) {
  const index = lines.findIndex(test);
  if (index < 0) return undefined;
  return { lines: lines.filter((_, i) => i !== index), mustName };
}

/** The line range of one table in iptables-save text. */
function inTable(lines: readonly string[], table: string): LineTest {
  const start = lines.indexOf(`*${table}`);
  const end = start < 0 ? -1 : lines.indexOf('COMMIT', start);
  return (_line, index) => start >= 0 && index > start && index < end;
}

const IPTABLES_EDITS: readonly Edit[] = [
  {
    name: 'remove nat OUTPUT’s jump into ISTIO_OUTPUT',
    leak: 'outbound',
    apply: (lines) =>
      removeWhere(lines, (l, i) => inTable(lines, 'nat')(l, i) && l === '-A OUTPUT -j ISTIO_OUTPUT', 'nat OUTPUT'),
  },
  {
    name: 'send outbound to 15999 instead of 15001',
    leak: 'outbound',
    apply: (lines) => replaceIn(lines, inTable(lines, 'nat'), /--to-ports 15001\b/, '--to-ports 15999'),
  },
  {
    name: 'narrow the 15001 redirect to odd marks',
    leak: 'outbound',
    apply: (lines) =>
      replaceIn(lines, (l) => l.includes('--to-ports 15001'), /! --mark 0x539\/0xfff/, '! --mark 0x0/0x1'),
  },
  {
    name: 'accept all TCP first in nat ISTIO_OUTPUT',
    leak: 'outbound',
    apply: (lines) => {
      const index = lines.findIndex((l, i) => inTable(lines, 'nat')(l, i) && l.startsWith('-A ISTIO_OUTPUT '));
      if (index < 0) return undefined;
      const rule = '-A ISTIO_OUTPUT -p tcp -j ACCEPT';
      return { lines: [...lines.slice(0, index), rule, ...lines.slice(index)], mustName: rule };
    },
  },
  {
    name: 'widen the outbound host-probe accept to 0.0.0.0/1',
    leak: 'outbound',
    apply: (lines) => replaceIn(lines, inTable(lines, 'nat'), /-d 169\.254\.7\.127\/32/, '-d 0.0.0.0/1'),
  },
  {
    name: 'widen the inbound host-probe accept to 0.0.0.0/1',
    leak: 'inbound',
    apply: (lines) =>
      replaceIn(lines, (l) => l.startsWith('-A ISTIO_PRERT '), /-s 169\.254\.7\.127\/32/, '-s 0.0.0.0/1'),
  },
  {
    name: 'remove PREROUTING’s jump into ISTIO_PRERT where inbound is captured',
    leak: 'inbound',
    apply: (lines) => {
      const table = lines.some((l) => l.includes('--on-port 15006')) ? 'mangle' : 'nat';
      return removeWhere(
        lines,
        (l, i) => inTable(lines, table)(l, i) && l === '-A PREROUTING -j ISTIO_PRERT',
        `${table} PREROUTING`,
      );
    },
  },
  {
    name: 'send inbound to 15999 instead of 15006',
    leak: 'inbound',
    apply: (lines) => replaceIn(lines, () => true, /(--to-ports|--on-port) 15006\b/, '$1 15999'),
  },
  {
    name: 'remove the UDP DNS redirect',
    leak: 'dns',
    apply: (lines) => removeWhere(lines, (l) => /-p udp .*--dport 53 .*REDIRECT --to-ports 15053/.test(l), DNS_MISSED),
  },
];

/** nft's redirect to the proxy's port (IPv4 rule) sent to 15999 instead. */
function nftPortEdit(leak: Leak, port: number): Edit {
  return {
    name: `send ${leak} to 15999 instead of ${port}`,
    leak,
    apply: (lines) =>
      replaceIn(
        lines,
        (l) => l.includes('ip daddr'),
        new RegExp(`redirect to :${port}\\b`),
        'redirect to :15999',
        'redirect to :15999',
      ),
  };
}

const NFT_EDITS: readonly Edit[] = [
  {
    name: 'remove nat output’s jump into istio-output',
    leak: 'outbound',
    apply: (lines) =>
      removeWhere(
        lines,
        (l) => l === 'add rule inet istio-ambient-nat output jump istio-output',
        'istio-ambient-nat output',
      ),
  },
  nftPortEdit('outbound', 15001),
  {
    name: 'narrow the 15001 redirect to odd marks',
    leak: 'outbound',
    apply: (lines) =>
      replaceIn(
        lines,
        (l) => l.includes('ip daddr') && l.includes(':15001'),
        /mark and 0xfff != 0x539/,
        'mark and 0x1 != 0x0',
        'meta mark & 0x1 != 0',
      ),
  },
  {
    name: 'accept all TCP first in istio-output',
    leak: 'outbound',
    apply: (lines) => {
      const index = lines.findIndex((l) => l.startsWith('add rule inet istio-ambient-nat istio-output '));
      if (index < 0) return undefined;
      const rule = 'add rule inet istio-ambient-nat istio-output meta l4proto tcp counter accept';
      return {
        lines: [...lines.slice(0, index), rule, ...lines.slice(index)],
        mustName: 'istio-ambient-nat istio-output',
      };
    },
  },
  {
    name: 'widen the outbound host-probe accept to 0.0.0.0/1',
    leak: 'outbound',
    apply: (lines) =>
      replaceIn(lines, () => true, /ip daddr 169\.254\.7\.127/, 'ip daddr 0.0.0.0/1', 'ip daddr 0.0.0.0/1'),
  },
  {
    name: 'widen the inbound host-probe accept to 0.0.0.0/1',
    leak: 'inbound',
    apply: (lines) =>
      replaceIn(lines, () => true, /ip saddr 169\.254\.7\.127/, 'ip saddr 0.0.0.0/1', 'ip saddr 0.0.0.0/1'),
  },
  {
    name: 'remove nat prerouting’s jump into istio-prerouting where inbound is captured',
    leak: 'inbound',
    apply: (lines) =>
      lines.some((l) => l.includes('redirect to :15006'))
        ? removeWhere(
            lines,
            (l) => l === 'add rule inet istio-ambient-nat prerouting jump istio-prerouting',
            'istio-ambient-nat prerouting',
          )
        : undefined,
  },
  nftPortEdit('inbound', 15006),
  {
    name: 'remove the UDP DNS redirect',
    leak: 'dns',
    apply: (lines) =>
      removeWhere(lines, (l) => l.includes('udp dport 53') && l.includes('redirect to :15053'), DNS_MISSED),
  },
];

function mutate(text: string, edits: readonly Edit[]): AmbientMutant[] {
  const lines = text.split('\n');
  return edits.flatMap((edit) => {
    const done = edit.apply(lines);
    return done ? [{ name: edit.name, leak: edit.leak, text: done.lines.join('\n'), mustName: done.mustName }] : [];
  });
}

/** Every edit that applies to this iptables-save text (one family). */
export const iptablesMutants = (text: string): AmbientMutant[] => mutate(text, IPTABLES_EDITS);
/** Every edit that applies to this `nft -f` golden. */
export const nftMutants = (text: string): AmbientMutant[] => mutate(text, NFT_EDITS);
