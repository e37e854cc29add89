import { readFileSync } from 'node:fs';
import type { Family } from '../../src/addr/ip.js';
import { PRESETS, type InterceptionSpec } from '../../src/config/interception.js';
import { analyzeDumps, type Analysis, type Dump } from '../../src/rules-check/analyze.js';
import { CORPUS } from '../explain/corpus.js';

/** Linkerd's own rules (linkerd2-proxy-init, cni-default, iptables-nft-save), which the finding tests edit one rule at a time. */
export const linkerd = readFileSync(`${CORPUS}/linkerd/cni-default/iptables-nft-save.v4.txt`, 'utf8');
export const REDIRECT_OUT =
  '-A PROXY_INIT_OUTPUT -p tcp -m comment --comment "proxy-init/redirect-all-outgoing-to-proxy-port" -j REDIRECT --to-ports 4140';

/** The analysis of one edited dump under Linkerd's preset (or `spec`), in one family; the dump must parse. */
export function analyseLinkerd(
  text: string,
  family: Family = 'ipv4',
  options: { workLimit?: number; spec?: InterceptionSpec } = {},
): Extract<Analysis, { kind: 'checked' }> {
  const dump: Dump = { backend: 'iptables-nft', family, source: 'linkerd', text };
  const analysis = analyzeDumps(options.spec ?? PRESETS.linkerd.spec, [dump], {
    families: [family],
    ...(options.workLimit ? { workLimit: options.workLimit } : {}),
  });
  if (analysis.kind !== 'checked') throw new Error('the dump must parse');
  return analysis;
}
