/**
 * How many expectations a rules check had, counted one way for `validate` and `explain`: those
 * where the configuration says where packets must go (`checked`), how many of them do not hold,
 * and those listed only for completeness (the configuration does not speak: `anything`).
 */
export interface ExpectationCount {
  readonly checked: number;
  readonly failing: number;
  readonly unconstrained: number;
}

interface Counted {
  /** Whether the configuration says where these packets must go. */
  readonly constrained: boolean;
  readonly holds: boolean;
}

export function countExpectations(answers: readonly Counted[]): ExpectationCount {
  const checked = answers.filter((answer) => answer.constrained);
  return {
    checked: checked.length,
    failing: checked.filter((answer) => !answer.holds).length,
    unconstrained: answers.length - checked.length,
  };
}

/** `2 of 15 expectations`: the same count in `validate`'s sentence and `explain`'s headline. */
export function expectationsText(part: number, count: ExpectationCount): string {
  return `${part} of ${count.checked} ${count.checked === 1 ? 'expectation' : 'expectations'}`;
}
