import { parseAllDocuments } from 'yaml';
import { fail, ok, type Result } from '../reason/result.js';
import { injectPodSpec, type InjectOptions } from './inject-pod-spec.js';
import { locatePodTemplates } from './pod-templates.js';

export interface Injected {
  readonly output: string;
  /** For stderr: objects passed through untouched, ordering warnings. */
  readonly notes: string[];
  readonly injected: number;
}

/**
 * Injects the validator into every pod template of a multi-document YAML stream. Documents are
 * edited through the `yaml` Document API, so comments, field order and quoting of everything
 * Interlock does not touch come out as they went in. `source` names the input in errors.
 */
export function injectYaml(
  text: string,
  options: InjectOptions,
  source: string,
): Result<Injected, 'ManifestUnparseable' | 'ConfigInvalid'> {
  const docs = parseAllDocuments(text, { prettyErrors: false, keepSourceTokens: false });
  if (!Array.isArray(docs)) return ok({ output: text, notes: [], injected: 0 });
  for (const doc of docs) {
    const error = doc.errors[0];
    if (error) {
      const [line, column] = error.linePos?.[0]
        ? [error.linePos[0].line, error.linePos[0].col]
        : lineColumn(text, error.pos[0]);
      return fail('ManifestUnparseable', `${source}:${line}:${column}: ${error.message.split('\n')[0]}`);
    }
  }
  for (const doc of docs) {
    try {
      // Aliases are resolved (and counted, against alias bombs) only here; a bad one fails the input, not the process.
      doc.toJS({ maxAliasCount: 1000 });
    } catch (error) {
      return fail('ManifestUnparseable', `${source}: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  const notes: string[] = [];
  let injected = 0;
  for (const doc of docs) {
    const { templates, skipped } = locatePodTemplates(doc);
    for (const label of skipped) notes.push(`note: ${label} has no pod template; passed through untouched`);
    for (const template of templates) {
      const note = injectPodSpec(doc, template, options);
      if (!note.ok) return note;
      if (note.value?.startsWith('error:')) return fail('ManifestUnparseable', note.value.slice('error: '.length));
      if (note.value) notes.push(note.value);
      injected++;
    }
  }
  // Nothing to inject: the input goes out byte for byte (spacing before comments included).
  if (injected === 0) return ok({ output: text, notes, injected });
  const style = styleOf(text);
  return ok({ output: docs.map((doc) => doc.toString({ lineWidth: 0, ...style })).join(''), notes, injected });
}

/**
 * The input's own layout, so untouched lines come out as they went in: kubectl writes sequences
 * unindented under their key (`containers:\n- name`) and flow maps without padding (`{a: 1}`).
 */
function styleOf(text: string): { indentSeq: boolean; flowCollectionPadding: boolean } {
  const unindented = /^( *)[^\s#-][^\n]*:[ \t]*\n\1- /m.test(text);
  const indented = /^( *)[^\s#-][^\n]*:[ \t]*\n\1 +- /m.test(text);
  return { indentSeq: indented || !unindented, flowCollectionPadding: /[{[] \S/.test(text) };
}

function lineColumn(text: string, offset: number): [number, number] {
  const before = text.slice(0, offset).split('\n');
  return [before.length, (before.at(-1)?.length ?? 0) + 1];
}
