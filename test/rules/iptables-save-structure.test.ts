import { describe, expect, it } from 'vitest';
import { dumpOf, errorOf, parseDump, refusalOf, ruleOf, tableBlock, tablesOf } from './iptables-save-dump.js';

// The structure of an iptables-save dump: tables, chain declarations, rule lines and COMMIT, and
// the parse error (line and sentence) for each line iptables-restore would refuse. The good lines
// are as iptables-save 1.8.9 prints them (with -c, counters in brackets); a few are iptables-restore
// input, which the same reader is given by `interlock explain`.

const failure = (line: number, message: string): unknown => ({
  kind: 'parse-error',
  reason: 'RulesUnparseable',
  source: 'iptables-save',
  line,
  message,
});

describe('tables', () => {
  it('each table keeps its backend, family, name and chains in the order declared; built-in chains get their hook', () => {
    const text = dumpOf(
      tableBlock('raw', [], ['-A OUTPUT -j CT --notrack']),
      '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [12:3456]\n:OUTPUT ACCEPT [0:0]\nCOMMIT',
    );
    const tables = tablesOf(parseDump(text, 'ipv6', 'iptables-legacy'));
    expect(tables.map((table) => [table.backend, table.family, table.name, [...table.chains.keys()]])).toEqual([
      ['iptables-legacy', 'ipv6', 'raw', ['PREROUTING', 'OUTPUT']],
      ['iptables-legacy', 'ipv6', 'filter', ['INPUT', 'FORWARD', 'OUTPUT']],
    ]);
    expect(tables[1]?.chains.get('FORWARD')).toEqual({
      name: 'FORWARD',
      rules: [],
      base: { hook: 'forward', priority: 0, type: 'filter', policy: 'drop' },
    });
    expect(tables[0]?.chains.get('OUTPUT')?.base).toEqual({
      hook: 'output',
      priority: -300,
      type: 'filter',
      policy: 'accept',
    });
  });

  it('a user chain has no base; a user chain named like a property of every object is a user chain', () => {
    const text = dumpOf(tableBlock('nat', ['ISTIO_OUTPUT', 'toString', 'constructor'], ['-A OUTPUT -j toString']));
    const nat = tablesOf(parseDump(text))[0];
    expect(nat?.chains.get('ISTIO_OUTPUT')).toEqual({ name: 'ISTIO_OUTPUT', rules: [] });
    expect(nat?.chains.get('constructor')).toEqual({ name: 'constructor', rules: [] });
    expect(nat?.chains.get('toString')).toEqual({ name: 'toString', rules: [] });
    expect(errorOf(parseDump('*nat\n:constructor ACCEPT [0:0]\nCOMMIT\n'))).toEqual(
      failure(2, 'user chain constructor cannot have a policy'),
    );
  });

  it("a table that is not one of iptables' own has no built-in chains, even one named like a property of every object", () => {
    expect(errorOf(parseDump('*constructor\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n'))).toEqual(
      failure(2, 'user chain OUTPUT cannot have a policy'),
    );
    expect(errorOf(parseDump('*toolong\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n'))).toEqual(
      failure(2, 'user chain OUTPUT cannot have a policy'),
    );
    expect(errorOf(parseDump('*constructor\n:length ACCEPT [0:0]\nCOMMIT\n'))).toEqual(
      failure(2, 'user chain length cannot have a policy'),
    );
    expect(errorOf(parseDump('*__proto__\n:toString ACCEPT [0:0]\nCOMMIT\n'))).toEqual(
      failure(2, 'user chain toString cannot have a policy'),
    );
  });

  it('no tables at all, and comment or blank lines only, parse to no tables', () => {
    expect(parseDump('')).toEqual({ ok: true, tables: [] });
    expect(parseDump('# Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n\n')).toEqual({
      ok: true,
      tables: [],
    });
  });

  it('CRLF line ends, a blank first line and a last line without a newline read as the same dump', () => {
    const text = dumpOf(tableBlock('nat', ['X'], ['-A OUTPUT -p tcp -j X']));
    const expected = tablesOf(parseDump(text));
    expect(tablesOf(parseDump(text.replaceAll('\n', '\r\n')))).toEqual(expected);
    expect(tablesOf(parseDump(`\n${text}`))[0]?.chains.get('OUTPUT')?.rules[0]?.provenance.line).toBe(9);
    const block = tableBlock('nat', ['X'], ['-A OUTPUT -p tcp -j X']);
    expect(tablesOf(parseDump(block))).toEqual(tablesOf(parseDump(`${block}\n`)));
    expect(tablesOf(parseDump(block))[0]?.chains.get('OUTPUT')?.rules).toHaveLength(1);
  });

  it('refuses a table started twice, started before COMMIT, badly named, or never committed, naming the line', () => {
    const nat = tableBlock('nat', [], []);
    expect(errorOf(parseDump(`${nat}\n${nat}\n`))).toEqual(failure(7, 'table "nat" appears twice'));
    expect(errorOf(parseDump(`*nat\n:OUTPUT ACCEPT [0:0]\n*mangle\nCOMMIT\n`))).toEqual(
      failure(3, 'table "mangle" starts before table "nat" was committed'),
    );
    expect(errorOf(parseDump('*NAT\nCOMMIT\n'))).toEqual(failure(1, '"*NAT" does not name a table'));
    expect(errorOf(parseDump('*Nat\nCOMMIT\n'))).toEqual(failure(1, '"*Nat" does not name a table'));
    expect(errorOf(parseDump('*\nCOMMIT\n'))).toEqual(failure(1, '"*" does not name a table'));
    expect(errorOf(parseDump(`*${'a'.repeat(33)}\nCOMMIT\n`))).toEqual(
      failure(1, `"*${'a'.repeat(33)}" does not name a table`),
    );
    expect(tablesOf(parseDump(`*${'a'.repeat(32)}\nCOMMIT\n`))[0]?.name).toBe('a'.repeat(32));
    expect(errorOf(parseDump('*nat x\nCOMMIT\n'))).toEqual(failure(1, '"*nat x" does not name a table'));
    expect(errorOf(parseDump('x*nat\nCOMMIT\n'))).toEqual(
      failure(1, '"x*nat" appears outside a table (expected *table first)'),
    );
    expect(
      errorOf(
        parseDump(
          `# Generated by iptables-save v1.8.9 on ...\n*mangle\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j RETURN\n`,
        ),
      ),
    ).toEqual(failure(2, 'table "mangle" has no COMMIT (truncated dump?)'));
  });

  it('refuses a line outside a table, quoting at most 80 characters of it', () => {
    expect(errorOf(parseDump('-A OUTPUT -j RETURN\n'))).toEqual(
      failure(1, '"-A OUTPUT -j RETURN" appears outside a table (expected *table first)'),
    );
    expect(errorOf(parseDump(`*nat\nCOMMIT\nCOMMIT\n`))).toEqual(
      failure(3, '"COMMIT" appears outside a table (expected *table first)'),
    );
    expect(errorOf(parseDump(`*nat\nCOMMIT\n:OUTPUT ACCEPT [0:0]\n`))).toEqual(
      failure(3, '":OUTPUT ACCEPT [0:0]" appears outside a table (expected *table first)'),
    );
  });

  it('refuses a dump over 16 MiB before reading any of it, naming line 1', () => {
    const cap = 16 * 1024 * 1024;
    expect(errorOf(parseDump(`*nat\n${'#'.repeat(cap - 4)}`))).toEqual({
      kind: 'parse-error',
      reason: 'RulesTooLarge',
      source: 'iptables-save',
      line: 1,
      message: "the dump is larger than 16 MiB, the limit for one dump; a pod's NAT rules are a few kilobytes",
    });
  });

  it('refuses a line over 64 KiB, before reading it', () => {
    const long = `-A OUTPUT -m comment --comment "${'x'.repeat(64 * 1024)}" -j RETURN`;
    expect(errorOf(parseDump(`*nat\n:OUTPUT ACCEPT [0:0]\n${long}\nCOMMIT\n`))).toEqual(
      failure(3, 'line is too long to be an iptables-save rule'),
    );
    expect(
      errorOf(parseDump(`*nat\n:OUTPUT ACCEPT [0:0]\n# ${'x'.repeat(64 * 1024)}\n-A INPUT -j RETURN\nCOMMIT\n`)),
    ).toEqual(failure(4, 'rule for chain INPUT, which table nat does not declare'));
    const exact = `-A OUTPUT -m comment --comment "${'x'.repeat(64 * 1024 - 43)}" -j RETURN`;
    expect(exact).toHaveLength(64 * 1024);
    expect(
      tablesOf(parseDump(`*nat\n:OUTPUT ACCEPT [0:0]\n${exact}\nCOMMIT\n`))[0]?.chains.get('OUTPUT')?.rules,
    ).toHaveLength(1);
  });
});

describe('chain declarations', () => {
  it('with or without counters, with counters of any size', () => {
    const nat = tablesOf(parseDump('*nat\n:OUTPUT DROP\n:ISTIO_OUTPUT -\n:PREROUTING ACCEPT [123:45678]\nCOMMIT\n'))[0];
    expect([...(nat?.chains.values() ?? [])]).toEqual([
      { name: 'OUTPUT', rules: [], base: { hook: 'output', priority: -100, type: 'nat', policy: 'drop' } },
      { name: 'ISTIO_OUTPUT', rules: [] },
      { name: 'PREROUTING', rules: [], base: { hook: 'prerouting', priority: -100, type: 'nat', policy: 'accept' } },
    ]);
  });

  it('a chain name of up to 64 characters', () => {
    const name = 'C'.repeat(64);
    expect([...(tablesOf(parseDump(`*nat\n:${name} - [0:0]\nCOMMIT\n`))[0]?.chains.keys() ?? [])]).toEqual([name]);
    expect(errorOf(parseDump(`*nat\n:${name}C - [0:0]\nCOMMIT\n`))).toEqual(
      failure(2, `":${name}C - [0:0]" is not a chain declaration`),
    );
  });

  it('iptables-restore input: blanks of any length between the fields', () => {
    const nat = tablesOf(parseDump('*nat\n:OUTPUT  ACCEPT  [0:0]\n:X \t - [0:0]\nCOMMIT\n'))[0];
    expect([...(nat?.chains.values() ?? [])]).toEqual([
      { name: 'OUTPUT', rules: [], base: { hook: 'output', priority: -100, type: 'nat', policy: 'accept' } },
      { name: 'X', rules: [] },
    ]);
  });

  it('refuses a declaration iptables-restore would refuse, naming the chain', () => {
    const declared = (line: string): unknown => errorOf(parseDump(`*nat\n${line}\nCOMMIT\n`));
    expect(declared(':OUTPUT QUEUE [0:0]')).toEqual(failure(2, 'chain OUTPUT has policy "QUEUE"'));
    expect(declared(':OUTPUT - [0:0]')).toEqual(failure(2, 'built-in chain OUTPUT has no policy'));
    expect(declared(':ISTIO_OUTPUT ACCEPT [0:0]')).toEqual(failure(2, 'user chain ISTIO_OUTPUT cannot have a policy'));
    expect(declared(':ISTIO_OUTPUT DROP [0:0]')).toEqual(failure(2, 'user chain ISTIO_OUTPUT cannot have a policy'));
    expect(declared(':X - [0:0]\n:X - [0:0]')).toEqual(failure(3, 'chain X is declared twice'));
    expect(declared(':OUTPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]')).toEqual(
      failure(3, 'chain OUTPUT is declared twice'),
    );
    expect(declared(':OUTPUT')).toEqual(failure(2, '":OUTPUT" is not a chain declaration'));
    expect(declared(':X - [0:0] [0:0]')).toEqual(failure(2, '":X - [0:0] [0:0]" is not a chain declaration'));
    expect(declared(':A B:C - [0:0]')).toEqual(failure(2, '":A B:C - [0:0]" is not a chain declaration'));
    expect(declared(':X - [0:0')).toEqual(failure(2, '":X - [0:0" is not a chain declaration'));
    expect(declared(`:X - [0:0] ${'y'.repeat(100)}`)).toEqual(
      failure(2, `":X - [0:0] ${'y'.repeat(66)}..." is not a chain declaration`),
    );
  });
});

describe('rule lines', () => {
  it('provenance: backend, family, table, chain, 1-based position, the line as printed and its number', () => {
    const text = dumpOf(
      tableBlock(
        'nat',
        ['ISTIO_REDIRECT'],
        ['-A OUTPUT -j ISTIO_REDIRECT', '-A ISTIO_REDIRECT -p tcp -j REDIRECT --to-ports 15001', '-A OUTPUT -j RETURN'],
      ),
    );
    const nat = tablesOf(parseDump(text, 'ipv6', 'iptables-legacy'))[0];
    expect(nat?.chains.get('OUTPUT')?.rules.map((rule) => rule.provenance)).toEqual([
      {
        backend: 'iptables-legacy',
        family: 'ipv6',
        table: 'nat',
        chain: 'OUTPUT',
        position: 1,
        text: '-A OUTPUT -j ISTIO_REDIRECT',
        line: 8,
      },
      {
        backend: 'iptables-legacy',
        family: 'ipv6',
        table: 'nat',
        chain: 'OUTPUT',
        position: 2,
        text: '-A OUTPUT -j RETURN',
        line: 10,
      },
    ]);
    expect(nat?.chains.get('ISTIO_REDIRECT')?.rules[0]?.provenance).toEqual({
      backend: 'iptables-legacy',
      family: 'ipv6',
      table: 'nat',
      chain: 'ISTIO_REDIRECT',
      position: 1,
      text: '-A ISTIO_REDIRECT -p tcp -j REDIRECT --to-ports 15001',
      line: 9,
    });
  });

  it('iptables-save -c: the [packets:bytes] prefix is read past and left out of the rule text', () => {
    const rule = ruleOf('[12:3456] -A OUTPUT -p tcp -j REDIRECT --to-ports 15001');
    expect(rule.actions).toEqual([{ kind: 'redirect', port: 15001 }]);
    expect(rule.matches).toEqual([{ kind: 'protocol', protocols: ['tcp'], negated: false }]);
    expect(rule.provenance.text).toBe('-A OUTPUT -p tcp -j REDIRECT --to-ports 15001');
    expect(ruleOf('[0:0] -A OUTPUT -j RETURN').provenance.text).toBe('-A OUTPUT -j RETURN');
    expect(ruleOf('[0:0]  \t-A OUTPUT -j RETURN').provenance.text).toBe('-A OUTPUT -j RETURN');
  });

  it('iptables-restore input: -c PACKETS BYTES inside the rule is read past', () => {
    expect(ruleOf('-A OUTPUT -p tcp -c 10 20 -j RETURN')).toMatchObject({
      matches: [{ kind: 'protocol', protocols: ['tcp'], negated: false }],
      actions: [{ kind: 'return' }],
      provenance: { text: '-A OUTPUT -p tcp -c 10 20 -j RETURN' },
    });
  });

  it('refuses a line that is not an -A rule, naming the line', () => {
    expect(refusalOf('-I OUTPUT 1 -j RETURN')).toEqual(failure(7, 'iptables-save never prints -I; expected -A'));
    expect(refusalOf('[0:0] -I OUTPUT -j RETURN')).toEqual(failure(7, 'iptables-save never prints -I; expected -A'));
    expect(refusalOf('-N ISTIO_INBOUND')).toEqual(
      failure(7, '"-N ISTIO_INBOUND" is neither a rule (-A) nor a chain, table or COMMIT line'),
    );
    expect(refusalOf('[0:0]x -A OUTPUT -j RETURN')).toEqual(
      failure(7, '"[0:0]x -A OUTPUT -j RETURN" is neither a rule (-A) nor a chain, table or COMMIT line'),
    );
    expect(refusalOf('[x[0:0] -A OUTPUT -j RETURN')).toEqual(
      failure(7, '"[x[0:0] -A OUTPUT -j RETURN" is neither a rule (-A) nor a chain, table or COMMIT line'),
    );
    expect(refusalOf('[0:0]')).toEqual(failure(7, '"[0:0]" is neither a rule (-A) nor a chain, table or COMMIT line'));
    expect(refusalOf('commit')).toEqual(
      failure(7, '"commit" is neither a rule (-A) nor a chain, table or COMMIT line'),
    );
    expect(refusalOf('-A')).toEqual(failure(7, '-A without a chain name'));
    expect(refusalOf('[0:0] -A')).toEqual(failure(7, '-A without a chain name'));
    expect(refusalOf('-A ISTIO_OUTPUT -j RETURN')).toEqual(
      failure(7, 'rule for chain ISTIO_OUTPUT, which table nat does not declare'),
    );
    expect(refusalOf('-A OUTPUT -m comment --comment "proxy-init/ignore-loopback -j RETURN')).toEqual(
      failure(7, 'unterminated quote'),
    );
  });

  it('refuses an option without its value, and a "!" with nothing after it', () => {
    expect(refusalOf('-A OUTPUT -p')).toEqual(failure(7, '-p without a protocol'));
    expect(refusalOf('-A OUTPUT -s')).toEqual(failure(7, '-s without an address'));
    expect(refusalOf('-A OUTPUT -d')).toEqual(failure(7, '-d without an address'));
    expect(refusalOf('-A PREROUTING -i')).toEqual(failure(7, '-i without an interface'));
    expect(refusalOf('-A OUTPUT -o')).toEqual(failure(7, '-o without an interface'));
    expect(refusalOf('-A OUTPUT --protocol')).toEqual(failure(7, '-p without a protocol'));
    expect(refusalOf('-A OUTPUT -m')).toEqual(failure(7, '-m without a module'));
    expect(refusalOf('-A OUTPUT -p tcp -j')).toEqual(failure(7, '-j without a target'));
    expect(refusalOf('-A OUTPUT -p tcp -g')).toEqual(failure(7, '-g without a target'));
    expect(refusalOf('-A OUTPUT -p tcp !')).toEqual(failure(7, 'dangling "!"'));
  });
});
