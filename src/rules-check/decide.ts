import type { Family } from '../addr/ip.js';
import type { InterceptionSpec } from '../config/interception.js';
import { parseDumps, verifyParsed, type Analysis, type Dump } from './analyze.js';
import { cannotRead, type InspectOptions, type RulesInspection } from './inspection.js';
import type { ParseError, Table } from '../rules/model.js';
import type { ReadOutcome } from '../rules/read/classify.js';
import { reportOf } from './report.js';
import { countExpectations, expectationsText } from '../expect/count.js';

type NotListable = Extract<ReadOutcome, { kind: 'not-listable' }>;
type Unreadable = Extract<ReadOutcome, { kind: 'unreadable' }>;
type TooLarge = Extract<ReadOutcome, { kind: 'too-large' }>;
type Checked = Extract<Analysis, { kind: 'checked' }>;

/** What the summary and report say about a legacy backend that could not be listed. */
interface LegacyGap {
  readonly listable: false;
  readonly families: readonly Family[];
  readonly files: readonly string[];
  readonly uid: number | undefined;
  readonly why: string;
}

/** What the reading produced, before any analysis. */
interface ReadSet {
  readonly reads: readonly string[];
  readonly dumps: readonly Dump[];
  /** Commands that ran and failed: timed out, printed too much, exited non-zero. */
  readonly failed: readonly Unreadable[];
  readonly gap: LegacyGap | undefined;
  /** The report fields every answer carries. */
  readonly report: Readonly<Record<string, unknown>>;
  /** One evidence line per thing that could not be read. */
  readonly unreadNotes: readonly string[];
}

/**
 * From read outcomes to the rules check's answer. Pure: every decision about what was and was
 * not read lives here, the adapter only gathers the outcomes.
 *
 * What was read is analysed whatever else could not be read, and a finding in it is decisive for
 * every family whose capture rules it holds: a command that failed or a legacy backend that could
 * not be listed never hides a mismatch (nor, beside a legacy backend not listed, an unknown). Where what was read holds no capture rules for a family,
 * the mesh's rules may be in what was not read: the rules are not inspected (auto) or unreadable
 * (required), saying why. A read that failed is never a pass; a legacy backend that could not be
 * listed beside nf_tables capture rules that pass is a pass that says legacy was not checked.
 */
export function decideInspection(
  spec: InterceptionSpec,
  outcomes: readonly ReadOutcome[],
  options: Omit<InspectOptions, 'timeoutMs'>,
): RulesInspection {
  return decideVariants([spec], outcomes, options, () => true)[0]!;
}

/**
 * decideInspection for each configuration a pod may have, in order, until `enough` says so: the
 * dumps are parsed once for all of them (the node agent's re-check of an ambient pod has four).
 */
export function decideVariants(
  specs: readonly InterceptionSpec[],
  outcomes: readonly ReadOutcome[],
  options: Omit<InspectOptions, 'timeoutMs'>,
  enough: (inspection: RulesInspection) => boolean,
): RulesInspection[] {
  const set = readSetOf(outcomes);
  const early = beforeAnalysis(outcomes, set, options);
  if (early) return [early];
  const parsed = parseDumps(set.dumps);
  if (parsed.kind === 'parse-error') return [unparseable(parsed.error, set, options.mode)];
  const deadline =
    options.analysisDeadline === undefined
      ? {}
      : { deadline: { at: options.analysisDeadline, now: () => performance.now() } };
  const answers: RulesInspection[] = [];
  for (const spec of specs) {
    const analysis = verifyParsed(spec, parsed.merged, { families: options.families, ...deadline });
    answers.push(judge(analysis, set, options));
    if (enough(answers.at(-1)!)) break;
  }
  return answers;
}

/** What is decided before any dump is parsed: one refused as too large, or none read at all. */
function beforeAnalysis(
  outcomes: readonly ReadOutcome[],
  set: ReadSet,
  options: Omit<InspectOptions, 'timeoutMs'>,
): RulesInspection | undefined {
  const large = outcomes.find((outcome): outcome is TooLarge => outcome.kind === 'too-large');
  if (large) return refusedTooLarge(large, set, options.mode);
  if (set.dumps.length > 0) return undefined;
  const why =
    set.failed.length > 0
      ? failedWhy(set.failed)
      : set.gap
        ? legacyUnlistedWhy(set.gap, set.gap.families)
        : 'neither iptables-save nor nft is installed';
  return cannotRead(options.mode, why, set.report, set.failed.length > 0 ? set.unreadNotes : [why]);
}

function readSetOf(outcomes: readonly ReadOutcome[]): ReadSet {
  const reads = outcomes.map(describeRead);
  const notListable = outcomes.filter((outcome): outcome is NotListable => outcome.kind === 'not-listable');
  const gap = notListable.length > 0 ? legacyGapOf(notListable) : undefined;
  const failed = outcomes.filter((outcome): outcome is Unreadable => outcome.kind === 'unreadable');
  const dumps = outcomes.flatMap((outcome) => (outcome.kind === 'read' ? [outcome.dump] : []));
  const unreadNotes = [
    ...failed.map((outcome) => `${outcome.command} failed (${outcome.why})`),
    ...(gap ? [legacyNote(gap)] : []),
  ];
  return { reads, dumps, failed, gap, report: { reads, ...(gap ? { legacy: gap } : {}) }, unreadNotes };
}

function failedWhy(failed: readonly Unreadable[]): string {
  return failed.map((outcome) => `${outcome.command} failed (${outcome.why})`).join('; ');
}

/**
 * A saver printed more than a pod's rules may take, or ran out of memory listing them: nothing is
 * analysed (a part could hide what the rest holds), `required` fails with RulesTooLarge naming
 * the table and the size, `auto` leaves the verdict to the probe and says why.
 */
function refusedTooLarge(large: TooLarge, set: ReadSet, mode: InspectOptions['mode']): RulesInspection {
  const family = large.family === undefined ? '' : ` (${large.family === 'ipv4' ? 'IPv4' : 'IPv6'})`;
  const table = large.table === undefined ? 'the rules' : `the ${large.table} table`;
  const message = `${table} of this pod${family} ${large.table === undefined ? 'are' : 'is'} too large to inspect: ${large.command} ${large.why}; refused unread, nothing of it was analysed`;
  const inspection = cannotRead(mode, message, set.report, [message, ...set.unreadNotes]);
  return mode === 'required' ? { ...inspection, reason: 'RulesTooLarge', message } : inspection;
}

/** A dump that does not parse is undecided; one over the size caps was not read in full. */
function unparseable(error: ParseError, set: ReadSet, mode: InspectOptions['mode']): RulesInspection {
  const message = `the rules printed by ${error.source} ${error.reason === 'RulesTooLarge' ? 'are too large to inspect' : 'do not parse'} (line ${error.line}: ${error.message})`;
  if (error.reason === 'RulesTooLarge')
    return cannotRead(mode, message, { ...set.report, parseError: error }, [message, ...set.unreadNotes]);
  return {
    status: 'unknown',
    reason: error.reason,
    message,
    evidence: [message, ...set.unreadNotes],
    report: { ...set.report, parseError: error },
  };
}

function judge(analysis: Checked, set: ReadSet, options: Omit<InspectOptions, 'timeoutMs'>): RulesInspection {
  const report = { ...set.report, ...reportOf(analysis) };
  const { check, merged } = analysis;
  const tables = merged.ruleset.tables;
  const unreadFamilies = set.failed.length > 0 ? options.families : (set.gap?.families ?? []);
  const uncovered = unreadFamilies.filter(
    (family) => options.families.includes(family) && !hasCaptureRules(tables, family),
  );
  // With a command failed, an unknown may be only what that command would have decoded (nft's
  // JSON shows iptables-nft's rules as undecodable xt expressions): only a mismatch is decisive.
  const decisive = check.findings.filter(
    (finding) =>
      !uncovered.includes(finding.expectation.family) &&
      (set.failed.length === 0 || finding.reason === 'RulesMismatch'),
  );
  const first = decisive[0];
  if (first) {
    const evidence = [
      ...decisive.slice(0, 5).map((finding) => finding.message),
      ...splitNotes(merged),
      ...set.unreadNotes,
    ];
    return {
      status: decisive.some((finding) => finding.reason === 'RulesMismatch') ? 'failed' : 'unknown',
      reason: first.reason,
      message: first.message,
      evidence,
      report,
    };
  }
  if (set.failed.length > 0) {
    const why = `${failedWhy(set.failed)}; ${uncovered.length > 0 ? `what was read holds no capture rules for ${familiesText(uncovered)}` : 'what was read alone proves nothing'}`;
    return cannotRead(options.mode, why, report, [why, ...set.unreadNotes.slice(set.failed.length)]);
  }
  if (set.gap && uncovered.length > 0) return cannotRead(options.mode, legacyUnlistedWhy(set.gap, uncovered), report);
  if (check.status !== 'passed') {
    const message = 'no expectation could be checked against these rules';
    return {
      status: check.status,
      reason: 'RulesUnknownMatch',
      message,
      evidence: [message, ...splitNotes(merged)],
      report,
    };
  }
  const gap = set.gap;
  const checked = `${merged.backendsWithRules.join(', ') || 'no backend'}${gap ? `; legacy iptables not listable by ${uidText(gap.uid)}, not checked` : ''}`;
  const count = countExpectations(
    check.answers.map((answer) => ({ constrained: answer.expectation.expected !== undefined, holds: answer.holds })),
  );
  const message = `every packet goes where the configuration expects: ${expectationsText(count.checked, count)} hold (${checked})`;
  return {
    status: 'passed',
    message,
    evidence: [message, ...splitNotes(merged), ...(gap ? [legacyNote(gap)] : [])],
    report,
  };
}

function splitNotes(merged: Checked['merged']): string[] {
  return merged.notes.filter((note) => note.startsWith('rules are split'));
}

/**
 * Whether nf_tables (iptables-nft and native nft tables) holds rules where a mesh captures a
 * family's TCP: a base chain hooked at PREROUTING or OUTPUT that is a nat chain or sits at mangle
 * priority (TPROXY, marks), with at least one rule.
 */
export function hasCaptureRules(tables: readonly Table[], family: Family): boolean {
  return tables.some(
    (table) =>
      (table.family === family || table.family === 'inet') &&
      [...table.chains.values()].some(
        (chain) =>
          chain.base !== undefined &&
          (chain.base.hook === 'prerouting' || chain.base.hook === 'output') &&
          (chain.base.type === 'nat' || chain.base.priority === MANGLE_PRIORITY) &&
          chain.rules.length > 0,
      ),
  );
}

const MANGLE_PRIORITY = -150;

function legacyGapOf(notListable: readonly NotListable[]): LegacyGap {
  const first = notListable[0] as NotListable;
  const whys = [...new Set(notListable.map((outcome) => outcome.why))];
  return {
    listable: false,
    families: notListable.map((outcome) => outcome.family),
    files: notListable.map((outcome) => outcome.path),
    uid: first.uid,
    why: whys.join(', '),
  };
}

function uidText(uid: number | undefined): string {
  return uid === undefined ? 'this uid' : `uid ${uid}`;
}

function filesText(gap: LegacyGap): string {
  return gap.files.length === 1 ? `${gap.files[0] ?? ''} is root-only` : `${gap.files.join(' and ')} are root-only`;
}

function familiesText(families: readonly Family[]): string {
  return families.map((family) => (family === 'ipv4' ? 'IPv4' : 'IPv6')).join(' and ');
}

/** The reason the rules were not inspected: what could not be listed, by whom, and what to do. */
function legacyUnlistedWhy(gap: LegacyGap, uncovered: readonly Family[]): string {
  const who = gap.uid === 0 ? `uid 0 (${gap.why})` : `${uidText(gap.uid)} without root`;
  return (
    `legacy iptables tables cannot be listed by ${who}: ${filesText(gap)} (${gap.why}); ` +
    `nf_tables holds no capture rules (nat/mangle PREROUTING/OUTPUT) for ${familiesText(uncovered)}; ` +
    'run the validator as root (uid 0) with CAP_NET_ADMIN and CAP_NET_RAW to inspect legacy rules'
  );
}

/** The evidence line when nf_tables' rules were analysed but legacy could not be listed. */
function legacyNote(gap: LegacyGap): string {
  return (
    `legacy iptables tables (${familiesText(gap.families)}) could not be listed by ${uidText(gap.uid)}: ${filesText(gap)} (${gap.why}); ` +
    'only the nf_tables rules were checked; run the validator as root (uid 0) with CAP_NET_ADMIN and CAP_NET_RAW to include legacy rules'
  );
}

function describeRead(outcome: ReadOutcome): string {
  switch (outcome.kind) {
    case 'read':
      // A test, not a split: the text may be megabytes.
      return `${outcome.dump.source}: ${/^-A|"rule"/m.test(outcome.dump.text) ? 'rules' : 'read'} (${outcome.dump.text.length} bytes)`;
    case 'absent':
      return `${outcome.command}: not installed`;
    case 'skipped':
      return `${outcome.command}: skipped, ${outcome.why}`;
    case 'unreadable':
    case 'too-large':
      return `${outcome.command}: ${outcome.why}`;
    case 'not-listable':
      return `${outcome.command}: not run, legacy tables not listable by ${uidText(outcome.uid)} (${outcome.path}: ${outcome.why})`;
  }
}
