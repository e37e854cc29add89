/** Longest piece of an operator's value a message repeats, in code points. */
const ECHO_LIMIT = 64;
/**
 * Longest file path a message repeats: a kubelet's volume paths run past 100 characters, and a
 * sentence that cuts the path does not name the file at fault. Well inside the 4 KiB termination
 * message.
 */
const PATH_ECHO_LIMIT = 512;

// C0 and C1 controls, DEL, the bidirectional marks, embeddings, overrides and isolates (a U+202E
// in a termination message reverses what the operator reads), and the Unicode line separators.
// eslint-disable-next-line no-control-regex -- matching control characters is this pattern's purpose.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

/**
 * A value as it may be repeated in a message: at most ECHO_LIMIT code points (then an ellipsis),
 * every control or bidirectional character shown as `\u{...}`, quotes and backslashes escaped.
 */
export function echoValue(value: string, limit = ECHO_LIMIT): string {
  let out = '';
  let count = 0;
  for (const char of value) {
    if (count === limit) return `${out}…`;
    count++;
    if (char === '"' || char === '\\') out += `\\${char}`;
    else if (UNSAFE.test(char)) out += `\\u{${(char.codePointAt(0) ?? 0).toString(16)}}`;
    else out += char;
  }
  return out;
}

/** `"value"`, echoed safely. */
export function quoted(value: string): string {
  return `"${echoValue(value)}"`;
}

/** `"path"`, echoed safely, whole up to PATH_ECHO_LIMIT. */
export function quotedPath(path: string): string {
  return `"${echoValue(path, PATH_ECHO_LIMIT)}"`;
}

/**
 * A sentence built elsewhere that may carry raw text (a parser's problem): control and
 * bidirectional characters escaped, cut at `limit` code points.
 */
export function safeSentence(text: string, limit = 300): string {
  let out = '';
  let count = 0;
  for (const char of text) {
    if (count === limit) return `${out}…`;
    count++;
    out += UNSAFE.test(char) ? `\\u{${(char.codePointAt(0) ?? 0).toString(16)}}` : char;
  }
  return out;
}
