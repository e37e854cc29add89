import type { Ruleset } from '../rules/model.js';

/** Every interface name and wildcard a ruleset's matches mention. */
export function interfacePatterns(ruleset: Ruleset): Set<string> {
  const names = new Set<string>();
  for (const table of ruleset.tables) {
    for (const chain of table.chains.values()) {
      for (const rule of chain.rules) {
        for (const match of rule.matches)
          if (match.kind === 'interface') for (const name of match.names) names.add(name);
      }
    }
  }
  return names;
}
