import type { Family } from '../addr/ip.js';
import type { InterceptionSpec } from '../config/interception.js';
import { analyzeDumps, type Dump } from './analyze.js';
import { cannotRead, type InspectOptions, type RulesInspection } from './inspection.js';
import type { Table } from '../rules/model.js';
import type { ReadOutcome } from '../rules/read/classify.js';
import { reportOf } from './report.js';

type NotListable = Extract<ReadOutcome, { kind: 'not-listable' }>;

/** What the summary and report say about a legacy backend that could not be listed. */
export interface LegacyGap {
  readonly listable: false;
  readonly families: readonly Family[];
  readonly files: readonly string[];
  readonly uid: number | undefined;
  readonly why: string;
}

/**
 * From read outcomes to the rules check's answer. Pure: every decision about what was and was
 * not read lives here, the adapter only gathers the outcomes.
 *
 * A legacy backend that could not be listed is never "no legacy rules". When nf_tables holds no
 * capture rules for a family whose legacy tables could not be listed, the mesh's rules may well
 * be in legacy: the rules are not inspected (auto) or unreadable (required), saying why. When
 * nf_tables does hold capture rules, they are analysed as usual and the answer says that legacy
 * was not listed.
 */
export function decideInspection(spec: InterceptionSpec, outcomes: readonly ReadOutcome[], options: Omit<InspectOptions, 'timeoutMs'>): RulesInspection {
  const reads = outcomes.map(describeRead);
  const notListable = outcomes.filter((outcome): outcome is NotListable => outcome.kind === 'not-listable');
  const gap = notListable.length > 0 ? legacyGapOf(notListable) : undefined;
  const gapReport = gap ? { legacy: gap } : {};
  const failed = outcomes.filter((outcome) => outcome.kind === 'unreadable');
  if (failed.length > 0) {
    const first = failed[0] as Extract<ReadOutcome, { kind: 'unreadable' }>;
    const why = `${first.command} failed (${first.why})`;
    return cannotRead(options.mode, why, { reads, ...gapReport }, gap ? [why, legacyNote(gap)] : [why]);
  }
  const dumps: Dump[] = outcomes.flatMap((outcome) => (outcome.kind === 'read' ? [outcome.dump] : []));
  if (dumps.length === 0 && !gap) return cannotRead(options.mode, 'neither iptables-save nor nft is installed', { reads });
  const analysis = dumps.length === 0 ? undefined : analyzeDumps(spec, dumps, { families: options.families, ...(options.sampleDestinations ? { sampleDestinations: options.sampleDestinations } : {}) });
  if (analysis?.kind === 'parse-error') {
    const { error } = analysis;
    const message = `the rules printed by ${error.source} do not parse (line ${error.line}: ${error.message})`;
    return { status: 'unknown', reason: 'RulesUnparseable', message, evidence: gap ? [message, legacyNote(gap)] : [message], report: { reads, ...gapReport, parseError: error } };
  }
  if (gap) {
    const nfTables = analysis ? analysis.merged.ruleset.tables.filter((table) => table.backend !== 'iptables-legacy') : [];
    const uncovered = gap.families.filter((family) => options.families.includes(family) && !hasCaptureRules(nfTables, family));
    if (uncovered.length > 0) {
      const why = legacyUnlistedWhy(gap, uncovered);
      return cannotRead(options.mode, why, { reads, ...gapReport });
    }
  }
  if (!analysis) return cannotRead(options.mode, 'neither iptables-save nor nft is installed', { reads, ...gapReport });
  const report = { reads, ...gapReport, ...reportOf(analysis) };
  const { check, merged } = analysis;
  const notes = [...merged.notes.filter((note) => note.startsWith('rules are split')), ...(gap ? [legacyNote(gap)] : [])];
  if (check.status === 'passed') {
    const checked = `${merged.backendsWithRules.join(', ') || 'no backend'}${gap ? `; legacy iptables not listable by ${uidText(gap.uid)}, not checked` : ''}`;
    const message = `the rules send all ${check.answers.length} packet questions where the configuration expects (${checked})`;
    return { status: 'passed', message, evidence: [message, ...notes], report };
  }
  const first = check.findings[0];
  const message = first?.message ?? 'no packet questions could be asked of these rules';
  const evidence = [...check.findings.slice(0, 5).map((finding) => finding.message), ...notes];
  return { status: check.status, reason: first?.reason ?? 'RulesUnknownMatch', message, evidence, report };
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
export function legacyUnlistedWhy(gap: LegacyGap, uncovered: readonly Family[]): string {
  const who = gap.uid === 0 ? `uid 0 (${gap.why})` : `${uidText(gap.uid)} without root`;
  return (
    `legacy iptables tables cannot be listed by ${who}: ${filesText(gap)} (${gap.why}); ` +
    `nf_tables holds no capture rules (nat/mangle PREROUTING/OUTPUT) for ${familiesText(uncovered)}; ` +
    'run the validator as root (uid 0) with CAP_NET_ADMIN and CAP_NET_RAW to inspect legacy rules'
  );
}

/** The evidence line when nf_tables' rules were analysed but legacy could not be listed. */
export function legacyNote(gap: LegacyGap): string {
  return (
    `legacy iptables tables (${familiesText(gap.families)}) could not be listed by ${uidText(gap.uid)}: ${filesText(gap)} (${gap.why}); ` +
    'only the nf_tables rules were checked; run the validator as root (uid 0) with CAP_NET_ADMIN and CAP_NET_RAW to include legacy rules'
  );
}

export function describeRead(outcome: ReadOutcome): string {
  switch (outcome.kind) {
    case 'read':
      return `${outcome.dump.source}: ${outcome.dump.text.split('\n').filter((line) => line.startsWith('-A') || line.includes('"rule"')).length > 0 ? 'rules' : 'read'} (${outcome.dump.text.length} bytes)`;
    case 'absent':
      return `${outcome.command}: not installed`;
    case 'skipped':
      return `${outcome.command}: skipped, ${outcome.why}`;
    case 'unreadable':
      return `${outcome.command}: ${outcome.why}`;
    case 'not-listable':
      return `${outcome.command}: not run, legacy tables not listable by ${uidText(outcome.uid)} (${outcome.path}: ${outcome.why})`;
  }
}
