import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const src = (file: string): string => path.join(root, 'src', file);
// The accessors (flagValue and its kin) and the one reader that fills the maps.
const ACCESSORS = [src('config/parsed-flags.ts'), src('config/parse-command-line.ts')];
const PARSERS = src('config/flag-parsers.ts');
const FLAG_TYPES = new Set(['FlagDef', 'DefaultedFlag']);

let last: ts.Program | undefined;

/** src/ as tsc sees it, with `planted` (path -> source) added beside it. */
function program(planted: Record<string, string> = {}): ts.Program {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('tsconfig.json does not parse');
  const host = ts.createCompilerHost(config.options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, ...rest) => {
    const text = planted[file];
    return text === undefined ? read(file, language, ...rest) : ts.createSourceFile(file, text, language);
  };
  host.fileExists = (
    (exists) => (file: string) =>
      file in planted || exists(file)
  )(host.fileExists.bind(host));
  last = ts.createProgram([...config.fileNames, ...Object.keys(planted)], config.options, host, last);
  return last;
}

const nameOf = (type: ts.Type | undefined): string | undefined => (type?.aliasSymbol ?? type?.getSymbol())?.getName();
const typeName = (checker: ts.TypeChecker, node: ts.Node): string | undefined =>
  nameOf(checker.getTypeAtLocation(node));
/** A flag declaration: an object literal written where a FlagDef is expected. */
const isFlagLiteral = (checker: ts.TypeChecker, node: ts.ObjectLiteralExpression): boolean => {
  const expected = checker.getContextualType(node);
  const names = expected?.isIntersection() ? expected.types.map(nameOf) : [nameOf(expected)];
  return names.some((name) => FLAG_TYPES.has(name ?? ''));
};

/** Where a value comes from: the file declaring the identifier (through imports), or a literal function. */
function origin(checker: ts.TypeChecker, expression: ts.Expression, seen = new Set<ts.Node>()): string[] {
  if (seen.has(expression)) return [];
  seen.add(expression);
  if (ts.isParenthesizedExpression(expression) || ts.isAsExpression(expression))
    return origin(checker, expression.expression, seen);
  if (ts.isCallExpression(expression)) return origin(checker, expression.expression, seen);
  if (ts.isArrowFunction(expression) || ts.isFunctionExpression(expression))
    return [`${expression.getSourceFile().fileName}: a parser written in place`];
  const target = ts.isIdentifier(expression) || ts.isPropertyAccessExpression(expression) ? expression : undefined;
  let symbol = target && checker.getSymbolAtLocation(target);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  const declaration = symbol?.declarations?.[0];
  if (!declaration) return [`${expression.getSourceFile().fileName}: ${expression.getText()} (unresolved)`];
  if (declaration.getSourceFile().fileName === PARSERS) return [];
  // A local name for a parser made in flag-parsers.ts (`const parsePath = parseNonBlank(...)`).
  if (ts.isVariableDeclaration(declaration) && declaration.initializer)
    return origin(checker, declaration.initializer, seen);
  return [`${declaration.getSourceFile().fileName}: ${expression.getText()}`];
}

/** Flag values read by name outside the accessors, and flag parsers made outside flag-parsers.ts. */
function offences(planted: Record<string, string> = {}): { reads: string[]; parsers: string[]; flags: number } {
  const built = program(planted);
  const checker = built.getTypeChecker();
  const reads: string[] = [];
  const parsers: string[] = [];
  let flags = 0;
  for (const file of built.getSourceFiles()) {
    if (!file.fileName.startsWith(`${root}/src/`) && !(file.fileName in planted)) continue;
    const at = (node: ts.Node): string =>
      `${path.relative(root, file.fileName)}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const visit = (node: ts.Node): void => {
      const read =
        (ts.isPropertyAccessExpression(node) && /^(values|sources)$/.test(node.name.text)) ||
        (ts.isElementAccessExpression(node) && /^['"](values|sources)['"]$/.test(node.argumentExpression.getText()));
      if (read && typeName(checker, node.expression) === 'ParsedFlags' && !ACCESSORS.includes(file.fileName))
        reads.push(`${at(node)} ${node.getText()}`);
      if (ts.isObjectLiteralExpression(node) && isFlagLiteral(checker, node)) {
        for (const property of node.properties)
          if (ts.isPropertyAssignment(property) && property.name.getText() === 'parse' && ++flags)
            parsers.push(...origin(checker, property.initializer).map((what) => `${at(property)} ${what}`));
      }
      if (ts.isCallExpression(node) && node.expression.getText() === 'valueFlag' && node.arguments[3] && ++flags)
        parsers.push(...origin(checker, node.arguments[3]).map((what) => `${at(node)} ${what}`));
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return { reads, parsers, flags };
}

// docs/ARCHITECTURE.md, "Commands and their flags": a flag is read through its declaration
// (flagValue), so a renamed flag fails to compile; a flag's parser comes from flag-parsers.ts, so
// no table grows a look-alike that refuses the same text in other words.
describe('flags are read through their declarations and parsed by flag-parsers.ts', () => {
  it('src/ reads no flag value by name and makes no parser of its own', () => {
    const { reads, parsers, flags } = offences();
    expect({ reads, parsers }).toEqual({ reads: [], parsers: [] });
    expect(flags).toBeGreaterThan(80);
  }, 60_000);

  it('finds a planted read by name and a planted parser', () => {
    const planted = src('cli/planted-flag.ts');
    const { reads, parsers } = offences({
      [planted]: [
        "import type { FlagDef } from '../config/flag-def.js';",
        "import type { ParsedFlags } from '../config/parsed-flags.js';",
        "import { ok } from '../reason/result.js';",
        "export const byName = (parsed: ParsedFlags): unknown => parsed.values.get('mesh');",
        "export const bySource = (parsed: ParsedFlags): unknown => parsed['sources'];",
        "export const PLANTED: FlagDef<string> = { name: 'planted', kind: 'value', help: '', parse: (text) => ok(text) };",
      ].join('\n'),
    });
    expect(reads).toEqual(['src/cli/planted-flag.ts:4 parsed.values', "src/cli/planted-flag.ts:5 parsed['sources']"]);
    expect(parsers).toEqual([`src/cli/planted-flag.ts:6 ${planted}: a parser written in place`]);
  }, 60_000);
});
