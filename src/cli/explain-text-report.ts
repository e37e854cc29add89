import { reportStepLine, type RulesReport } from '../rules-check/report.js';

function headline(report: RulesReport): string {
  const failing = report.questions.filter((question) => !question.holds).length;
  if (report.status === 'passed') return `PASSED: all ${report.questions.length} expectations hold`;
  if (report.status === 'failed') return `FAILED: ${failing} of ${report.questions.length} expectations do not hold`;
  return `UNKNOWN: ${failing} of ${report.questions.length} expectations cannot be decided from these rules (not a pass)`;
}

/** The human-readable explain report: headline, what is wrong, then every expectation. */
export function textReport(report: RulesReport, findings: readonly string[], configuration: string): string {
  const lines: string[] = [`interlock explain: ${headline(report)}`, `configuration: ${configuration}`];
  lines.push(`families: ${report.families.join(', ')}; backends with rules: ${report.backendsWithRules.join(', ') || 'none'}`);
  for (const note of report.notes) lines.push(`note: ${note}`);
  if (findings.length > 0) {
    lines.push('', 'What is wrong:');
    for (const finding of findings) lines.push(`  - ${finding}`);
  }
  lines.push('', 'Expectations:');
  for (const question of report.questions) {
    lines.push(`  ${question.holds ? 'ok  ' : 'FAIL'} ${question.id}: ${question.description} -> ${question.actual}${question.holds ? '' : ` (expected ${question.expected})`}`);
    if (!question.holds) {
      for (const step of question.path) lines.push(`         ${reportStepLine(step)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
