import { describe, expect, it } from 'vitest';
import {
  ANY_MARK,
  formatMarkCube,
  intersectMarks,
  markCube,
  rewriteMarks,
  sameMarks,
  subtractMarks,
  ZERO_MARK,
  type MarkSet,
} from '../../src/trace/mark-set.js';

// Marks as the rules test and set them: `-m mark --mark 0x10/0xf0`, `--set-xmark 0x500/0xf00`,
// Istio's 0x539 and Linkerd's full 32-bit masks. Values are exact cubes (care, bits).
const cube = (care: number, bits: number): MarkSet => [{ care, bits }];

describe('markCube', () => {
  it('keeps only the masked bits of the value, as unsigned 32-bit numbers', () => {
    expect(markCube(0x10, 0xf0)).toEqual(cube(0xf0, 0x10));
    expect(markCube(0x1ff, 0xf0)).toEqual(cube(0xf0, 0xf0));
    expect(markCube(0xffffffff, 0xffffffff)).toEqual(cube(0xffffffff, 0xffffffff));
    expect(markCube(0x80000000, 0x80000000)).toEqual(cube(0x80000000, 0x80000000));
    expect(markCube(0x539, 0)).toEqual(cube(0, 0));
  });
});

describe('intersectMarks', () => {
  it('any mark narrows nothing: the other set itself comes back', () => {
    const masked = markCube(0x10, 0xf0);
    expect(intersectMarks(masked, ANY_MARK)).toBe(masked);
    expect(intersectMarks(ANY_MARK, masked)).toBe(masked);
  });

  it('an empty set meets nothing', () => {
    expect(intersectMarks([], markCube(0x1, 0x1))).toEqual([]);
    expect(intersectMarks(markCube(0x1, 0x1), [])).toEqual([]);
    expect(intersectMarks([], ANY_MARK)).toEqual([]);
  });

  it('cubes on different bits combine; a conflict on a shared bit is empty', () => {
    expect(intersectMarks(markCube(0x10, 0xf0), markCube(0x1, 0xf))).toEqual(cube(0xff, 0x11));
    expect(intersectMarks(ZERO_MARK, markCube(0x1, 0x1))).toEqual([]);
    expect(intersectMarks(markCube(0x1, 0x1), ZERO_MARK)).toEqual([]);
    expect(intersectMarks(ZERO_MARK, markCube(0, 0xff00))).toEqual(ZERO_MARK);
    expect(intersectMarks(markCube(0x80000000, 0x80000000), markCube(0xffffffff, 0xffffffff))).toEqual(
      cube(0xffffffff, 0xffffffff),
    );
  });

  it('several cubes on each side: every pair that meets, in order', () => {
    const a: MarkSet = [
      { care: 0x1, bits: 0x1 },
      { care: 0x2, bits: 0x2 },
    ];
    const b: MarkSet = [
      { care: 0x4, bits: 0x0 },
      { care: 0x1, bits: 0x0 },
    ];
    expect(intersectMarks(a, b)).toEqual([
      { care: 0x5, bits: 0x1 },
      { care: 0x6, bits: 0x2 },
      { care: 0x3, bits: 0x2 },
    ]);
  });
});

describe('subtractMarks', () => {
  it('one cube without a masked one: one disjoint cube per bit the mask adds', () => {
    expect(subtractMarks(ANY_MARK, markCube(0x10, 0xf0))).toEqual([
      { care: 0x10, bits: 0x00 },
      { care: 0x30, bits: 0x30 },
      { care: 0x70, bits: 0x50 },
      { care: 0xf0, bits: 0x90 },
    ]);
    expect(subtractMarks(ANY_MARK, markCube(0x1, 0x1))).toEqual(cube(0x1, 0x0));
    expect(subtractMarks(ANY_MARK, markCube(0x80000000, 0x80000000))).toEqual(cube(0x80000000, 0));
  });

  it('bits the first cube already fixes are not split again', () => {
    expect(subtractMarks(markCube(0x1, 0x1), markCube(0x3, 0x3))).toEqual(cube(0x3, 0x1));
    expect(subtractMarks(ZERO_MARK, markCube(0x1, 0x1))).toEqual(ZERO_MARK);
    expect(subtractMarks(ZERO_MARK, ZERO_MARK)).toEqual([]);
    expect(subtractMarks(ANY_MARK, ANY_MARK)).toEqual([]);
  });

  it('a disjoint cube leaves the set as it is; an empty one removes nothing', () => {
    const masked = markCube(0x10, 0xf0);
    expect(subtractMarks(masked, markCube(0x20, 0xf0))).toEqual(masked);
    expect(subtractMarks(masked, [])).toEqual(masked);
    expect(subtractMarks([], masked)).toEqual([]);
  });

  it('several cubes removed one after the other', () => {
    expect(
      subtractMarks(ANY_MARK, [
        { care: 0x1, bits: 0x1 },
        { care: 0x2, bits: 0x2 },
      ]),
    ).toEqual(cube(0x3, 0x0));
  });
});

describe('rewriteMarks', () => {
  it('--set-xmark 0x500/0xf00 makes the masked bits known and keeps the rest', () => {
    expect(rewriteMarks(ZERO_MARK, 0x500, 0xf00)).toEqual(cube(0xffffffff, 0x500));
    expect(rewriteMarks(ANY_MARK, 0x500, 0xf00)).toEqual(cube(0xf00, 0x500));
    expect(rewriteMarks(markCube(0xa7, 0xff), 0x500, 0xf00)).toEqual(cube(0xfff, 0x5a7));
  });

  it('value bits outside the mask flip the known bits there (mark = mark & ~mask ^ value)', () => {
    expect(rewriteMarks(markCube(0x0f, 0xff), 0x3, 0xf0)).toEqual(cube(0xff, 0x0c));
    expect(rewriteMarks(ZERO_MARK, 0x80000000, 0xffffffff)).toEqual(cube(0xffffffff, 0x80000000));
    expect(
      rewriteMarks(
        [
          { care: 0x1, bits: 0x1 },
          { care: 0x2, bits: 0x0 },
        ],
        0x4,
        0x4,
      ),
    ).toEqual([
      { care: 0x5, bits: 0x5 },
      { care: 0x6, bits: 0x4 },
    ]);
  });
});

describe('sameMarks', () => {
  it('compares length, care and bits', () => {
    expect(sameMarks(markCube(0x10, 0xf0), markCube(0x10, 0xf0))).toBe(true);
    expect(sameMarks([], [])).toBe(true);
    expect(sameMarks(markCube(0x10, 0xf0), markCube(0x10, 0xff))).toBe(false);
    expect(sameMarks(markCube(0x10, 0xf0), markCube(0x20, 0xf0))).toBe(false);
    expect(sameMarks(ANY_MARK, [])).toBe(false);
    expect(sameMarks([], ANY_MARK)).toBe(false);
  });
});

describe('formatMarkCube', () => {
  it('any, a full mark, and a masked one', () => {
    expect(formatMarkCube({ care: 0, bits: 0 })).toBe('any');
    expect(formatMarkCube({ care: 0xffffffff, bits: 0x539 })).toBe('0x539');
    expect(formatMarkCube({ care: 0xffffffff, bits: 0 })).toBe('0x0');
    expect(formatMarkCube({ care: 0xf00, bits: 0x500 })).toBe('0x500/0xf00');
  });
});
