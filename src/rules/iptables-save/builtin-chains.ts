import type { ChainType, Hook } from '../model.js';

interface BuiltinChain {
  readonly hook: Hook;
  readonly priority: number;
  readonly type: ChainType;
}

/**
 * The hooks and priorities the kernel registers for iptables' built-in chains (NF_IP_PRI_*), the
 * same numbers nft uses for `raw`, `mangle`, `dstnat`, `filter`, `srcnat`, so chains of both
 * backends can be ordered on one scale.
 */
const BUILTIN: Readonly<Record<string, Readonly<Record<string, BuiltinChain>>>> = {
  raw: {
    PREROUTING: { hook: 'prerouting', priority: -300, type: 'filter' },
    OUTPUT: { hook: 'output', priority: -300, type: 'filter' },
  },
  mangle: {
    PREROUTING: { hook: 'prerouting', priority: -150, type: 'filter' },
    INPUT: { hook: 'input', priority: -150, type: 'filter' },
    FORWARD: { hook: 'forward', priority: -150, type: 'filter' },
    OUTPUT: { hook: 'output', priority: -150, type: 'route' },
    POSTROUTING: { hook: 'postrouting', priority: -150, type: 'filter' },
  },
  nat: {
    PREROUTING: { hook: 'prerouting', priority: -100, type: 'nat' },
    INPUT: { hook: 'input', priority: 100, type: 'nat' },
    OUTPUT: { hook: 'output', priority: -100, type: 'nat' },
    POSTROUTING: { hook: 'postrouting', priority: 100, type: 'nat' },
  },
  filter: {
    INPUT: { hook: 'input', priority: 0, type: 'filter' },
    FORWARD: { hook: 'forward', priority: 0, type: 'filter' },
    OUTPUT: { hook: 'output', priority: 0, type: 'filter' },
  },
  security: {
    INPUT: { hook: 'input', priority: 50, type: 'filter' },
    FORWARD: { hook: 'forward', priority: 50, type: 'filter' },
    OUTPUT: { hook: 'output', priority: 50, type: 'filter' },
  },
};

/** Own keys only: a user chain may be named `toString` or `constructor`, and iptables accepts it. */
export function builtinChain(table: string, chain: string): BuiltinChain | undefined {
  const chains = Object.hasOwn(BUILTIN, table) ? BUILTIN[table] : undefined;
  return chains && Object.hasOwn(chains, chain) ? chains[chain] : undefined;
}
