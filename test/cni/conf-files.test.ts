import { describe, expect, it } from 'vitest';
import { confFiles, goExtension, goSortByName } from '../../src/cni/conf-files.js';
import { listing } from './listing.js';

describe('which files libcni counts (ConfFiles with .conf, .conflist, .json)', () => {
  it('counts the three extensions exactly, case-sensitively, from the final dot', () => {
    const names = [
      'a.conf',
      'b.conflist',
      'c.json',
      'd.CONF',
      'e.conf.bak',
      'f.yaml',
      'g',
      '.conf',
      'h.conflist~',
      'i.json.conf',
    ];
    const counted = confFiles(listing(Object.fromEntries(names.map((name) => [name, '{}']))).entries).map(
      (entry) => entry.name,
    );
    expect(counted).toEqual(['a.conf', 'b.conflist', 'c.json', '.conf', 'i.json.conf']);
  });

  it('never counts a directory, whatever its name', () => {
    expect(confFiles(listing({ 'net.conf': null, 'x.conflist': '{}' }).entries).map((entry) => entry.name)).toEqual([
      'x.conflist',
    ]);
  });

  it('Go filepath.Ext', () => {
    expect(goExtension('10-calico.conflist')).toBe('.conflist');
    expect(goExtension('noext')).toBe('');
    expect(goExtension('trailing.')).toBe('.');
  });
});

describe("the runtimes' order (Go sort.Strings: bytes, not numbers, not UTF-16)", () => {
  const order = (names: string[]): string[] => goSortByName(names.map((name) => ({ name }))).map((item) => item.name);

  it('sorts digits as text: 10- before 9-, and 05- before 10-', () => {
    expect(order(['9-a.conf', '10-b.conf', '05-c.conf'])).toEqual(['05-c.conf', '10-b.conf', '9-a.conf']);
  });

  it('a shared stem: the shorter name first (10-x.conf before 10-x.conflist)', () => {
    expect(order(['10-x.conflist', '10-x.conf', '10-x.json'])).toEqual(['10-x.conf', '10-x.conflist', '10-x.json']);
  });

  it('upper case before lower case, and "-" before digits', () => {
    expect(order(['a.conf', 'B.conf', '1.conf', '-z.conf'])).toEqual(['-z.conf', '1.conf', 'B.conf', 'a.conf']);
  });

  it('UTF-8 byte order where UTF-16 order differs', () => {
    // U+FF21 is EF BC A1 in UTF-8 and sorts before U+1F600 (F0 ...); in UTF-16 the surrogate D83D comes first.
    const names = ['\u{1F600}.conf', '\uFF21.conf'];
    expect([...names].sort()).toEqual(names);
    expect(order(names)).toEqual(['\uFF21.conf', '\u{1F600}.conf']);
  });
});
