import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type TypeScript from 'typescript';
import { apiVersionOf, RESOURCE_TABLE } from './resources.js';

/**
 * The API server's strict decoding (`fieldValidation=Strict`): a field the Kubernetes type does
 * not have is an error naming its path. The types are kubernetes-models' (generated from
 * Kubernetes' OpenAPI schema), read with the TypeScript checker; built once, on first use.
 */
interface Checker {
  readonly checker: TypeScript.TypeChecker;
  readonly kinds: ReadonlyMap<string, TypeScript.Type>;
  readonly node: TypeScript.Node;
}

let built: Checker | undefined;
/**
 * Loaded at run time through require, not bundled: the stand-in is also bundled into one file
 * (the events tests, the bench) that never validates fields.
 */
let ts: typeof TypeScript;

/** The generated module of a kind: `kubernetes-models/v1/Pod`, `@kubernetes-models/cert-manager/cert-manager.io/v1/Issuer`. */
const modulePath = (models: string, apiVersion: string, kind: string): string => `${models}/${apiVersion}/${kind}`;

function build(): Checker {
  const require = createRequire(import.meta.url);
  ts = require('typescript') as typeof TypeScript;
  const here = dirname(require.resolve('kubernetes-models/package.json'));
  const entries = RESOURCE_TABLE.map((info) => {
    const apiVersion = apiVersionOf(info);
    return `  '${apiVersion}/${info.kind}': import('${modulePath(info.models ?? 'kubernetes-models', apiVersion, info.kind)}').I${info.kind};`;
  });
  const source = `export interface Kinds {\n${entries.join('\n')}\n}\n`;
  const fileName = `${dirname(here)}/__stand_in_kinds__.ts`;
  const options: TypeScript.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  };
  const host = ts.createCompilerHost(options);
  const original = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language) =>
    name === fileName ? ts.createSourceFile(name, source, language) : original(name, language);
  const program = ts.createProgram([fileName], options, host);
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(fileName)!;
  const declaration = file.statements[0] as TypeScript.InterfaceDeclaration;
  const kindsType = checker.getTypeAtLocation(declaration);
  const kinds = new Map<string, TypeScript.Type>();
  for (const property of checker.getPropertiesOfType(kindsType))
    kinds.set(property.name, checker.getTypeOfSymbolAtLocation(property, declaration));
  return { checker, kinds, node: declaration };
}

function objectMembers(checker: TypeScript.TypeChecker, type: TypeScript.Type): TypeScript.Type[] {
  const members = type.isUnion() ? type.types : [type];
  return members.filter((member) => (member.flags & ts.TypeFlags.Object) !== 0 && !checker.isArrayType(member));
}

function arrayElement(checker: TypeScript.TypeChecker, type: TypeScript.Type): TypeScript.Type | undefined {
  const members = type.isUnion() ? type.types : [type];
  const array = members.find((member) => checker.isArrayType(member));
  return array ? checker.getTypeArguments(array as TypeScript.TypeReference)[0] : undefined;
}

function walk(context: Checker, value: unknown, type: TypeScript.Type, path: string, out: string[]): void {
  const { checker, node } = context;
  if (Array.isArray(value)) {
    const element = arrayElement(checker, type);
    if (element) value.forEach((item, index) => walk(context, item, element, `${path}[${index}]`, out));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const [objectType] = objectMembers(checker, type);
  if (!objectType) return;
  const index = checker.getIndexInfoOfType(objectType, ts.IndexKind.String);
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    const at = path ? `${path}.${key}` : key;
    const property = checker.getPropertyOfType(objectType, key);
    if (property) walk(context, inner, checker.getTypeOfSymbolAtLocation(property, node), at, out);
    else if (index) walk(context, inner, index.type, at, out);
    else out.push(at);
  }
}

/** The paths of the fields the object's Kubernetes type does not have (`spec.template.spec.bogus`). */
export function unknownFields(apiVersion: string, kind: string, object: unknown): string[] | undefined {
  built ??= build();
  const type = built.kinds.get(`${apiVersion}/${kind}`);
  if (!type) return undefined;
  const out: string[] = [];
  walk(built, object, type, '', out);
  return out;
}
