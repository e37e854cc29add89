/**
 * A set of 32-bit marks as a union of ternary cubes (header space analysis): each cube fixes the
 * bits in `care` to the bits of `bits` and leaves the others free. Mark tests (mark & mask == v)
 * and --set-xmark rewrites are exact on cubes.
 */
export interface MarkCube {
  readonly care: number;
  readonly bits: number;
}
export type MarkSet = readonly MarkCube[];

export const ANY_MARK: MarkSet = [{ care: 0, bits: 0 }];
export const ZERO_MARK: MarkSet = [{ care: 0xffffffff, bits: 0 }];

export function markCube(value: number, mask: number): MarkSet {
  return [{ care: mask >>> 0, bits: (value & mask) >>> 0 }];
}

function intersectCubes(a: MarkCube, b: MarkCube): MarkCube | undefined {
  const both = (a.care & b.care) >>> 0;
  if (((a.bits ^ b.bits) & both) >>> 0 !== 0) return undefined;
  return { care: (a.care | b.care) >>> 0, bits: (a.bits | b.bits) >>> 0 };
}

function isAny(set: MarkSet): boolean {
  return set.length === 1 && (set[0] as MarkCube).care === 0;
}

export function intersectMarks(a: MarkSet, b: MarkSet): MarkSet {
  // Any mark at all narrows nothing: share the other set instead of copying it.
  if (isAny(b)) return a;
  if (isAny(a)) return b;
  const out: MarkCube[] = [];
  for (const x of a)
    for (const y of b) {
      const cube = intersectCubes(x, y);
      if (cube) out.push(cube);
    }
  return out;
}

/** One cube without another: one cube per free bit of `a` that `b` fixes, disjoint. */
function subtractCube(a: MarkCube, b: MarkCube): MarkCube[] {
  if (!intersectCubes(a, b)) return [a];
  const out: MarkCube[] = [];
  let care = a.care;
  let bits = a.bits;
  for (let bit = 0; bit < 32; bit++) {
    const flag = (1 << bit) >>> 0;
    if ((b.care & flag) === 0 || (a.care & flag) !== 0) continue;
    out.push({ care: (care | flag) >>> 0, bits: ((bits & ~flag) | (~b.bits & flag)) >>> 0 });
    care = (care | flag) >>> 0;
    bits = ((bits & ~flag) | (b.bits & flag)) >>> 0;
  }
  return out;
}

export function subtractMarks(a: MarkSet, b: MarkSet): MarkSet {
  let rest: MarkCube[] = [...a];
  for (const cube of b) rest = rest.flatMap((piece) => subtractCube(piece, cube));
  return rest;
}

/** mark = (mark & ~mask) ^ value: the bits of `mask` become known, the others may flip. */
export function rewriteMarks(set: MarkSet, value: number, mask: number): MarkSet {
  return set.map((cube) => ({
    care: (cube.care | mask) >>> 0,
    bits: ((((cube.bits ^ value) & ~mask & cube.care) >>> 0) | ((value & mask) >>> 0)) >>> 0,
  }));
}

export function sameMarks(a: MarkSet, b: MarkSet): boolean {
  return (
    a.length === b.length && a.every((cube, index) => cube.care === b[index]?.care && cube.bits === b[index]?.bits)
  );
}

export function formatMarkCube(cube: MarkCube): string {
  if (cube.care === 0) return 'any';
  return cube.care === 0xffffffff
    ? `0x${cube.bits.toString(16)}`
    : `0x${cube.bits.toString(16)}/0x${cube.care.toString(16)}`;
}
