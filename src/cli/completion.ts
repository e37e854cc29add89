import { flagHelp, type FlagDef } from '../config/flag-def.js';
import type { CommandSpec } from './command-spec.js';
import type { Shell } from './commands/completion/flags.js';

/** What a shell may offer after a flag: its choices, file names, directory names, or nothing. */
type ValueKind =
  { readonly kind: 'choices'; readonly values: readonly string[] } | { readonly kind: 'files' | 'dirs' | 'none' };

/** From the FlagDef alone: `choices`, else a placeholder listing them (`yaml|json`), else FILE/PATH/DIR. */
export function valueKind(flag: FlagDef): ValueKind {
  const placeholder = flag.placeholder ?? '';
  if (flag.choices) return { kind: 'choices', values: flag.choices };
  if (/FILE|PATH/.test(placeholder)) return { kind: 'files' };
  if (/DIR/.test(placeholder)) return { kind: 'dirs' };
  if (/^[A-Za-z0-9.-]+(\|[A-Za-z0-9.-]+)+$/.test(placeholder))
    return { kind: 'choices', values: placeholder.split('|') };
  return { kind: 'none' };
}

/** The command's own flags, then the flags it passes on (`manifest --node-agent` takes node's). */
const flagsOf = (spec: CommandSpec) => [...spec.flags, ...(spec.passedOn ?? [])];
const wordsOf = (flag: FlagDef) => [`--${flag.name}`, ...(flag.short ? [`-${flag.short}`] : [])];
/** The first sentence of a flag's help, for the shells that show one. */
const firstSentence = (text: string) => text.replace(/`/g, '').split(/(?<=\.)\s/)[0] ?? '';

function bashValueCases(spec: CommandSpec): string[] {
  return flagsOf(spec)
    .filter((flag) => flag.kind === 'value')
    .map((flag) => {
      const kind = valueKind(flag);
      const reply =
        kind.kind === 'choices'
          ? `COMPREPLY=($(compgen -W "${kind.values.join(' ')}" -- "$cur"))`
          : kind.kind === 'files'
            ? 'COMPREPLY=($(compgen -f -- "$cur"))'
            : kind.kind === 'dirs'
              ? 'COMPREPLY=($(compgen -d -- "$cur"))'
              : 'COMPREPLY=()';
      return `    ${wordsOf(flag)
        .map((word) => `"${spec.name} ${word}"`)
        .join('|')}) ${reply}; return ;;`;
    });
}

function bashScript(specs: readonly CommandSpec[]): string {
  const names = [...specs.map((spec) => spec.name), 'help'];
  const valueCases = specs.flatMap(bashValueCases);
  const wordCases = specs.map(
    (spec) =>
      `    ${spec.name}) COMPREPLY=($(compgen -W "${[...(spec.positional ?? []), ...flagsOf(spec).flatMap(wordsOf)].join(' ')}" -- "$cur")) ;;`,
  );
  return `# bash completion for interlock: source <(interlock completion bash)
_interlock() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]}
  if [ "$COMP_CWORD" -le 1 ]; then
    COMPREPLY=($(compgen -W "${names.join(' ')}" -- "$cur"))
    return
  fi
  local cmd=\${COMP_WORDS[1]}
  case "$cmd $prev" in
${valueCases.join('\n')}
  esac
  case $cmd in
${wordCases.join('\n')}
    help) COMPREPLY=($(compgen -W "${names.join(' ')}" -- "$cur")) ;;
  esac
}
complete -F _interlock interlock
`;
}

const zshQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
const zshDescription = (text: string) => firstSentence(text).replace(/([[\]:\\])/g, '\\$1');

function zshFlag(flag: FlagDef): string[] {
  const description = `[${zshDescription(flagHelp(flag))}]`;
  if (flag.kind === 'switch') return wordsOf(flag).map((word) => zshQuote(`${word}${description}`));
  const kind = valueKind(flag);
  const action =
    kind.kind === 'choices'
      ? `(${kind.values.join(' ')})`
      : kind.kind === 'files'
        ? '_files'
        : kind.kind === 'dirs'
          ? '_files -/'
          : ' ';
  const value = `${description}:${(flag.placeholder ?? 'value').replace(/:/g, '\\:')}:${action}`;
  return [zshQuote(`--${flag.name}=${value}`), ...(flag.short ? [zshQuote(`-${flag.short}+${value}`)] : [])];
}

function zshScript(specs: readonly CommandSpec[]): string {
  const commands = [
    ...specs.map((spec) => [spec.name, spec.summary] as const),
    ['help', 'Print the help of a command.'],
  ];
  const cases = specs.map((spec) => {
    const positional = spec.positional ? [zshQuote(`1:${spec.name}:(${spec.positional.join(' ')})`)] : [];
    return `    ${spec.name}) _arguments -s ${[...positional, ...flagsOf(spec).flatMap(zshFlag)].join(' \\\n        ')} ;;`;
  });
  return `#compdef interlock
# zsh completion for interlock: interlock completion zsh > "\${fpath[1]}/_interlock"
_interlock() {
  local -a commands
  commands=(${commands.map(([name, summary]) => zshQuote(`${name}:${summary.replace(/:/g, '\\:')}`)).join(' ')})
  if (( CURRENT == 2 )); then
    _describe command commands
    return
  fi
  local cmd=$words[2]
  shift words
  (( CURRENT-- ))
  case $cmd in
${cases.join('\n')}
    help) _describe command commands ;;
  esac
}
if [ "$funcstack[1]" = _interlock ]; then _interlock "$@"; else compdef _interlock interlock; fi
`;
}

const fishQuote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function fishFlag(spec: CommandSpec, flag: FlagDef): string {
  const parts = [`complete -c interlock -n ${fishQuote(`__fish_seen_subcommand_from ${spec.name}`)} -l ${flag.name}`];
  if (flag.short) parts.push(`-s ${flag.short}`);
  if (flag.kind === 'value') {
    const kind = valueKind(flag);
    if (kind.kind === 'choices') parts.push(`-x -a ${fishQuote(kind.values.join(' '))}`);
    else if (kind.kind === 'files') parts.push('-r -F');
    else if (kind.kind === 'dirs') parts.push(`-x -a '(__fish_complete_directories)'`);
    else parts.push('-x');
  }
  parts.push(`-d ${fishQuote(firstSentence(flagHelp(flag)))}`);
  return parts.join(' ');
}

function fishScript(specs: readonly CommandSpec[]): string {
  const names = [...specs.map((spec) => spec.name), 'help'];
  const lines = [
    '# fish completion for interlock: interlock completion fish > ~/.config/fish/completions/interlock.fish',
    'complete -c interlock -f',
    ...specs.map(
      (spec) => `complete -c interlock -n __fish_use_subcommand -a ${spec.name} -d ${fishQuote(spec.summary)}`,
    ),
    `complete -c interlock -n __fish_use_subcommand -a help -d ${fishQuote('Print the help of a command.')}`,
    `complete -c interlock -n ${fishQuote('__fish_seen_subcommand_from help')} -a ${fishQuote(names.join(' '))}`,
    ...specs.flatMap((spec) => [
      ...(spec.positional
        ? [
            `complete -c interlock -n ${fishQuote(`__fish_seen_subcommand_from ${spec.name}`)} -a ${fishQuote(spec.positional.join(' '))}`,
          ]
        : []),
      ...flagsOf(spec).map((flag) => fishFlag(spec, flag)),
    ]),
  ];
  return `${lines.join('\n')}\n`;
}

/** The completion script of a shell, generated from the command table and its flags. */
export function completionScript(shell: Shell, specs: readonly CommandSpec[]): string {
  return shell === 'bash' ? bashScript(specs) : shell === 'zsh' ? zshScript(specs) : fishScript(specs);
}
