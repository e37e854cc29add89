import { flagHelp, type FlagDef } from '../config/flag-def.js';
import type { CommandSpec } from './command-spec.js';

/** `--inbound-port PORT`, `--tproxy` or `-h, --help`: how a flag is written on a command line. */
export function flagUsage(flag: FlagDef): string {
  const long = flag.kind === 'switch' ? `--${flag.name}` : `--${flag.name} ${flag.placeholder ?? 'VALUE'}`;
  return flag.short === undefined ? long : `-${flag.short}, ${long}`;
}

/** Help is wrapped to the terminal, 80 columns when stdout is not one (a pipe, a file, a pod log). */
export function helpWidth(stream: { readonly isTTY?: boolean; readonly columns?: number }): number {
  return stream.isTTY === true && stream.columns !== undefined ? Math.min(Math.max(stream.columns, 40), 120) : 80;
}

/** Words of `text` in lines of at most `width` columns (a longer word stands alone), each after `indent`. */
export function wrap(text: string, width: number, indent = 0, firstIndent = indent): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((item) => item !== '')) {
    const room = width - (lines.length === 0 ? firstIndent : indent);
    if (line !== '' && line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.map((text, index) => `${' '.repeat(index === 0 ? firstIndent : indent)}${text}`.trimEnd());
}

/** Rows of a two-column list: the term, then its text wrapped beside it (or under it when the term is long). */
function table(rows: ReadonlyArray<readonly [string, string]>, width: number, maxColumn: number): string[] {
  const column = Math.min(Math.max(...rows.map(([term]) => term.length)) + 4, width < 60 ? 8 : maxColumn);
  return rows.flatMap(([term, text]) => {
    const head = `  ${term}`;
    if (head.length + 2 > column) return [head, ...wrap(text, width, column)];
    const [first = '', ...rest] = wrap(text, width, column);
    return [`${head}${first.slice(head.length)}`, ...rest];
  });
}

const plain = (text: string) => text.replace(/`/g, '');

/** A command's help, the one layout of every command: usage, summary, description, flags, environment, exit codes. */
export function formatCommandHelp(spec: Omit<CommandSpec, 'load'>, width: number): string {
  const flags = spec.flags;
  const sections = [
    [`Usage: interlock ${spec.name}${spec.usage ? ` ${spec.usage}` : ''}`],
    wrap(spec.summary, width),
    ...spec.description.map((paragraph) => wrap(plain(paragraph), width)),
    [
      'Flags:',
      ...table(
        flags.map((flag) => [flagUsage(flag), plain(flagHelp(flag))] as const),
        width,
        32,
      ),
    ],
  ];
  const environment = [
    ...flags.flatMap((flag) => (flag.env ? [[flag.env, `--${flag.name}`] as const] : [])),
    ...(spec.environment ?? []).map((variable) => [variable.name, plain(variable.help)] as const),
  ];
  if (environment.length > 0)
    sections.push(['Environment (a flag wins over its variable):', ...table(environment, width, 36)]);
  if (spec.exitCodes.length > 0)
    sections.push([
      'Exit codes:',
      ...table(
        spec.exitCodes.map(([code, text]) => [code, plain(text)] as const),
        width,
        14,
      ),
    ]);
  return `${sections.map((lines) => lines.join('\n')).join('\n\n')}\n`;
}

/** `interlock help`: every command with its one-line summary. */
export function formatTopHelp(specs: readonly CommandSpec[], width: number): string {
  return [
    'Usage: interlock COMMAND [flags]',
    '',
    ...wrap(
      "Interlock proves, as an init container, that a service mesh (Linkerd, Istio) intercepts a pod's TCP, and fails the pod with the reason when it does not.",
      width,
    ),
    '',
    'Commands:',
    ...table(
      [
        ...specs.map((spec) => [spec.name, spec.summary] as const),
        ['help', 'Print the help of a command: interlock help COMMAND.'] as const,
      ],
      width,
      14,
    ),
    '',
    ...wrap("Run 'interlock help COMMAND' or 'interlock COMMAND --help' for a command's flags.", width),
    '',
  ].join('\n');
}

/**
 * @public The same layout for a command the command table (src/cli/command-table.ts) does not
 * list yet: its first paragraph is the summary, the rest the description.
 */
export function formatHelp(command: CommandSpec['name'], summary: string, flags: readonly FlagDef[]): string {
  const [first = '', ...rest] = summary.split(/\n\s*\n/);
  return formatCommandHelp(
    { name: command, usage: '[flags]', summary: first, description: rest, flags, exitCodes: [] },
    80,
  );
}
