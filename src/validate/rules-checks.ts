import type { ValidateConfig } from '../config/validate-config.js';
import { isReason, type Reason } from '../reason/reason.js';
import { failed, passed, type VerdictCheck } from '../verdict/verdict-check.js';
import { PRECEDENCE } from './probe-checks.js';
import type { RulesInspectionResult } from './rules-port.js';

function reasonOr(reason: string | undefined, fallback: Reason): Reason {
  return reason !== undefined && isReason(reason) ? reason : fallback;
}

/** The rules inspection as a check: only 'passed' passes; what was not read is said, never counted. */
export function rulesCheck(result: RulesInspectionResult, mode: ValidateConfig['rules']): VerdictCheck {
  const required = mode === 'required';
  switch (result.status) {
    case 'passed':
      return { ...passed('rules', result.message, result.evidence), required };
    case 'failed':
    case 'unknown':
      // An engine exception is a bug in the validator (exit 70), not a verdict on the pod.
      if (result.reason === 'RulesEngineError')
        return failed('rules', 'RulesEngineError', result.message, result.evidence, 'internal', PRECEDENCE.rules);
      return failed(
        'rules',
        reasonOr(result.reason, result.status === 'failed' ? 'RulesMismatch' : 'RulesUnknown'),
        result.message,
        result.evidence,
        'validation',
        PRECEDENCE.rules,
      );
    default:
      if (required)
        return failed(
          'rules',
          reasonOr(result.reason, 'RulesUnreadable'),
          result.message,
          result.evidence,
          'validation',
          PRECEDENCE.rules,
        );
      return {
        name: 'rules',
        status: 'not-inspected',
        reason: reasonOr(result.reason, 'RulesNotInspected'),
        message: result.message,
        evidence: result.evidence,
        required: false,
      };
  }
}
