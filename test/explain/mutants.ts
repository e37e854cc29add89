/**
 * Ruleset mutations over real dump text. Each returns the mutated text and what a failure report
 * must mention to count as naming the mutated rule (its new text, or the chain it was removed from),
 * or undefined when the dump has no such rule.
 */
export interface Mutant {
  readonly text: string;
  readonly mustName: string;
}

function natSection(lines: string[]): [number, number] | undefined {
  const start = lines.indexOf('*nat');
  if (start < 0) return undefined;
  const end = lines.indexOf('COMMIT', start);
  return end < 0 ? undefined : [start, end];
}

/** Removes nat OUTPUT's jump into the mesh's chain. */
export function removeOutputJump(text: string): Mutant | undefined {
  const lines = text.split('\n');
  const section = natSection(lines);
  if (!section) return undefined;
  const index = lines.findIndex(
    (line, i) => i > section[0] && i < section[1] && /^-A OUTPUT .*-j (ISTIO_OUTPUT|PROXY_INIT_OUTPUT)\b/.test(line),
  );
  if (index < 0) return undefined;
  lines.splice(index, 1);
  return { text: lines.join('\n'), mustName: 'nat OUTPUT' };
}

/** Changes the port of the nat REDIRECT to `port`. */
export function changeRedirectPort(text: string, port: number, to: number): Mutant | undefined {
  const lines = text.split('\n');
  const index = lines.findIndex((line) => line.startsWith('-A ') && line.includes(`-j REDIRECT --to-ports ${port}`));
  if (index < 0) return undefined;
  const mutated = (lines[index] as string).replace(`--to-ports ${port}`, `--to-ports ${to}`);
  lines[index] = mutated;
  return { text: lines.join('\n'), mustName: mutated };
}

/** Drops every nat rule that RETURNs the proxy's uid. */
export function dropProxyUidExclusion(text: string, uid: string): Mutant | undefined {
  const lines = text.split('\n');
  const section = natSection(lines);
  if (!section) return undefined;
  const pattern = new RegExp(`^-A (\\S+) (?!.*! --uid-owner).*--uid-owner ${uid}\\b.*-j RETURN$`);
  let chain: string | undefined;
  const kept = lines.filter((line, i) => {
    if (i <= section[0] || i >= section[1]) return true;
    const match = pattern.exec(line);
    if (match && !line.includes(' -o lo')) {
      chain = match[1];
      return false;
    }
    return true;
  });
  return chain ? { text: kept.join('\n'), mustName: `nat ${chain}` } : undefined;
}

/** Puts `-A <chain> -j RETURN` before every other rule of the nat table. */
export function blanketReturnFirst(text: string, chain: string): Mutant | undefined {
  const lines = text.split('\n');
  const section = natSection(lines);
  if (!section || !lines.some((line) => line.startsWith(`:${chain} `))) return undefined;
  const first = lines.findIndex((line, i) => i > section[0] && line.startsWith('-A '));
  const rule = `-A ${chain} -j RETURN`;
  lines.splice(first < 0 ? section[1] : first, 0, rule);
  return { text: lines.join('\n'), mustName: rule };
}

/** Changes nothing a packet can notice: counters, an unrelated chain and rules, comments, a filter table. */
export function benign(text: string): string {
  if (text.trim() === '') return text;
  const lines = text.split('\n').map((line) => (line.startsWith('-A ') ? `[7:420] ${line}` : line));
  const out: string[] = [];
  for (const line of lines) {
    if (line === '*nat') {
      out.push(line, ':INTERLOCK_UNRELATED - [0:0]');
      continue;
    }
    if (
      line === 'COMMIT' &&
      out.includes(':INTERLOCK_UNRELATED - [0:0]') &&
      !out.some((l) => l.includes('-A INTERLOCK_UNRELATED'))
    ) {
      out.push(
        '-A INTERLOCK_UNRELATED -p udp -m udp --dport 9999 -m comment --comment "unrelated, never jumped to" -j ACCEPT',
      );
      out.push('-A INTERLOCK_UNRELATED -d 203.0.113.0/24 -j RETURN');
    }
    out.push(line);
  }
  out.push(
    '# a comment line',
    '*filter',
    ':INPUT ACCEPT [3:120]',
    ':FORWARD ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    '-A INPUT -p udp -m udp --dport 9 -m comment --comment "benign rule" -j ACCEPT',
    'COMMIT',
    '',
  );
  return out.join('\n');
}

type NftItem = Record<string, Record<string, unknown>>;

/** The same four mutations on `nft -j list ruleset` (Istio's native nftables). */
export function nftMutants(
  json: string,
  proxyUid: number,
  inboundPort: number,
): Array<{ name: string; mutant: Mutant | undefined }> {
  const load = (): NftItem[] => (JSON.parse(json) as { nftables: NftItem[] }).nftables;
  const save = (items: NftItem[]): string => JSON.stringify({ nftables: items });
  const isRule = (item: NftItem): boolean => item['rule'] !== undefined;
  const expr = (item: NftItem): Array<Record<string, unknown>> =>
    (item['rule']?.['expr'] as Array<Record<string, unknown>>) ?? [];
  const outputBase = (items: NftItem[]): string | undefined => {
    const chain = items.find((item) => item['chain']?.['hook'] === 'output' && item['chain']?.['type'] === 'nat');
    return chain?.['chain']?.['name'] as string | undefined;
  };
  const results: Array<{ name: string; mutant: Mutant | undefined }> = [];
  {
    const items = load();
    const base = outputBase(items);
    const index = items.findIndex(
      (item) => isRule(item) && item['rule']?.['chain'] === base && expr(item).some((e) => e['jump'] !== undefined),
    );
    if (index >= 0) items.splice(index, 1);
    results.push({
      name: 'remove-jump',
      mutant:
        index >= 0
          ? { text: save(items), mustName: `${String(items[index]?.['rule']?.['table'] ?? 'istio-proxy-nat')} ${base}` }
          : undefined,
    });
  }
  {
    const items = load();
    const rule = items.find(
      (item) =>
        isRule(item) && expr(item).some((e) => (e['redirect'] as { port?: number } | undefined)?.port === inboundPort),
    );
    if (rule) for (const e of expr(rule)) if (e['redirect']) e['redirect'] = { port: 15999 };
    results.push({
      name: 'redirect-port',
      mutant: rule ? { text: save(items), mustName: 'redirect to :15999' } : undefined,
    });
  }
  {
    const items = load();
    const before = items.length;
    const kept = items.filter((item) => {
      const e = expr(item);
      const uidMatch = e.some((x) => {
        const m = x['match'] as { op?: string; left?: { meta?: { key?: string } }; right?: unknown } | undefined;
        return m?.op === '==' && m.left?.meta?.key === 'skuid' && m.right === proxyUid;
      });
      const noLo = !e.some(
        (x) => (x['match'] as { left?: { meta?: { key?: string } } } | undefined)?.left?.meta?.key === 'oifname',
      );
      return !(isRule(item) && uidMatch && noLo && e.some((x) => 'return' in x));
    });
    results.push({
      name: 'drop-uid-exclusion',
      mutant: kept.length < before ? { text: save(kept), mustName: 'istio-output' } : undefined,
    });
  }
  {
    const items = load();
    const base = outputBase(items);
    const index = items.findIndex((item) => isRule(item) && item['rule']?.['chain'] === base);
    const template = items[index]?.['rule'];
    if (template)
      items.splice(index, 0, {
        rule: {
          family: template['family'],
          table: template['table'],
          chain: base,
          handle: 999,
          expr: [{ return: null }],
        },
      });
    results.push({ name: 'blanket-return', mutant: template ? { text: save(items), mustName: 'return' } : undefined });
  }
  return results;
}
