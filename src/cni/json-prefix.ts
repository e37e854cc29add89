/**
 * Whether a text that does not parse as JSON is a *prefix* of a valid document: what a reader
 * sees while another process is writing the file (truncate, then write) or after a writer died
 * half-way. JSON.parse's messages do not say this reliably ("{" and '{"a":' fail differently),
 * so a small strict scanner (RFC 8259, the grammar Go's encoding/json accepts) answers it.
 */
export type JsonShape =
  | { readonly kind: 'complete' }
  | { readonly kind: 'truncated' }
  | { readonly kind: 'malformed'; readonly offset: number };

class Truncated extends Error {}
class Malformed extends Error {
  constructor(readonly offset: number) {
    super('malformed');
  }
}

export function jsonShape(text: string): JsonShape {
  const scanner = new Scanner(text);
  try {
    scanner.skipSpace();
    scanner.value(0);
    scanner.skipSpace();
    if (scanner.position < text.length) return { kind: 'malformed', offset: scanner.position };
    return { kind: 'complete' };
  } catch (error) {
    if (error instanceof Truncated) return { kind: 'truncated' };
    if (error instanceof Malformed) return { kind: 'malformed', offset: error.offset };
    throw error;
  }
}

// Deep nesting is malformed for our purpose: no CNI configuration nests this far, and recursion
// must stay bounded on hostile input.
const MAX_DEPTH = 512;

class Scanner {
  position = 0;
  constructor(private readonly text: string) {}

  private peek(): string {
    if (this.position >= this.text.length) throw new Truncated();
    return this.text[this.position] as string;
  }

  private expect(char: string): void {
    if (this.peek() !== char) throw new Malformed(this.position);
    this.position++;
  }

  skipSpace(): void {
    while (this.position < this.text.length && ' \t\n\r'.includes(this.text[this.position] as string)) this.position++;
  }

  value(depth: number): void {
    if (depth > MAX_DEPTH) throw new Malformed(this.position);
    const char = this.peek();
    if (char === '{') return this.container('}', depth, true);
    if (char === '[') return this.container(']', depth, false);
    if (char === '"') return this.string();
    if (char === '-' || (char >= '0' && char <= '9')) return this.number();
    for (const word of ['true', 'false', 'null']) {
      if (word.startsWith(char)) {
        for (const expected of word) this.expect(expected);
        return;
      }
    }
    throw new Malformed(this.position);
  }

  private container(close: string, depth: number, keyed: boolean): void {
    this.position++;
    this.skipSpace();
    if (this.peek() === close) {
      this.position++;
      return;
    }
    for (;;) {
      if (keyed) {
        if (this.peek() !== '"') throw new Malformed(this.position);
        this.string();
        this.skipSpace();
        this.expect(':');
        this.skipSpace();
      }
      this.value(depth + 1);
      this.skipSpace();
      if (this.peek() === close) {
        this.position++;
        return;
      }
      this.expect(',');
      this.skipSpace();
    }
  }

  private string(): void {
    this.position++;
    for (;;) {
      const char = this.peek();
      this.position++;
      if (char === '"') return;
      if (char < ' ') throw new Malformed(this.position - 1);
      if (char !== '\\') continue;
      const escape = this.peek();
      this.position++;
      if (escape === 'u') {
        for (let i = 0; i < 4; i++) {
          if (!/[0-9a-fA-F]/.test(this.peek())) throw new Malformed(this.position);
          this.position++;
        }
      } else if (!'"\\/bfnrt'.includes(escape)) throw new Malformed(this.position - 1);
    }
  }

  private number(): void {
    if (this.peek() === '-') this.position++;
    if (this.peek() === '0') this.position++;
    else this.digits();
    if (this.position < this.text.length && this.text[this.position] === '.') {
      this.position++;
      this.digits();
    }
    if (this.position < this.text.length && 'eE'.includes(this.text[this.position] as string)) {
      this.position++;
      if ('+-'.includes(this.peek())) this.position++;
      this.digits();
    }
  }

  private digits(): void {
    if (!/[0-9]/.test(this.peek())) throw new Malformed(this.position);
    while (this.position < this.text.length && /[0-9]/.test(this.text[this.position] as string)) this.position++;
  }
}
