const OPTION_ALIASES: ReadonlyMap<string, string> = new Map(
  Object.entries({
    '--protocol': '-p',
    '--source': '-s',
    '--src': '-s',
    '--destination': '-d',
    '--dst': '-d',
    '--in-interface': '-i',
    '--out-interface': '-o',
    '--match': '-m',
    '--jump': '-j',
    '--goto': '-g',
    '--destination-port': '--dport',
    '--source-port': '--sport',
    '--destination-ports': '--dports',
    '--source-ports': '--sports',
  }),
);

const DASH = 0x2d;

/** The short form of a long option; every alias starts with `--`, so other words skip the lookup. */
export function aliasOf(word: string): string {
  return word.charCodeAt(0) === DASH && word.charCodeAt(1) === DASH ? (OPTION_ALIASES.get(word) ?? word) : word;
}

const RULE_LEVEL_OPTIONS = new Set(['-p', '-s', '-d', '-i', '-o', '-m', '-j', '-g', '-c']);

/** Whether a word (or `!` and the word after it) starts an option of the rule, not of a module. */
export function isRuleLevelOption(word: string, next: string | undefined): boolean {
  if (word === '!' && next !== undefined) return isRuleLevelOption(next, undefined);
  return RULE_LEVEL_OPTIONS.has(aliasOf(word));
}
