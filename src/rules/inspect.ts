import type { Family, IpAddress } from '../addr/ip.js';
import type { InterceptionSpec } from '../config/interception.js';
import type { Dump } from './analyze.js';
import { readCapabilities } from './read/capabilities.js';
import type { ReadOutcome } from './read/read-live.js';

export interface RulesInspection {
  readonly status: 'passed' | 'failed' | 'unknown' | 'not-inspected' | 'unreadable';
  /** Stable CamelCase: RulesMismatch, RulesUnknownMatch, RulesUnreadable, RulesNotInspected, RulesUnparseable. */
  readonly reason?: string;
  readonly message: string;
  readonly evidence: readonly string[];
  readonly report: unknown;
}

export interface InspectOptions {
  readonly families: readonly Family[];
  readonly mode: 'auto' | 'required';
  readonly timeoutMs: number;
  readonly sampleDestinations?: Partial<Record<Family, IpAddress>>;
}

/**
 * The validator's one call: read the pod's rules from every backend, trace the configuration's
 * packet questions, and answer in plain data. Never throws; anything unexpected fails closed.
 */
export async function inspectLiveRules(spec: InterceptionSpec, options: InspectOptions): Promise<RulesInspection> {
  try {
    return await inspect(spec, options);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { status: 'unreadable', reason: 'RulesUnreadable', message: `the rules could not be inspected: ${why}`, evidence: [why], report: { error: why } };
  }
}

function cannotRead(mode: InspectOptions['mode'], why: string, report: unknown): RulesInspection {
  if (mode === 'auto') {
    return { status: 'not-inspected', reason: 'RulesNotInspected', message: `the rules were not inspected (${why}); the probe alone decided`, evidence: [why], report };
  }
  return { status: 'unreadable', reason: 'RulesUnreadable', message: `the rules are required but cannot be read: ${why}`, evidence: [why], report };
}

async function inspect(spec: InterceptionSpec, options: InspectOptions): Promise<RulesInspection> {
  const capabilities = await readCapabilities();
  if (capabilities && !capabilities.netAdmin) return cannotRead(options.mode, 'no CAP_NET_ADMIN to read iptables/nftables', { capabilities });
  // Loaded only once reading is possible: execa and the engine cost tens of milliseconds at
  // start-up, which a capability-less init container (the common case) must not pay.
  const [{ readLiveRules }, { analyzeDumps }, { reportOf }] = await Promise.all([
    import('./read/read-live.js'),
    import('./analyze.js'),
    import('./report.js'),
  ]);
  const outcomes = await readLiveRules(options.families, options.timeoutMs);
  const reads = outcomes.map(describeRead);
  const failed = outcomes.filter((outcome) => outcome.kind === 'unreadable');
  if (failed.length > 0) {
    const first = failed[0] as Extract<ReadOutcome, { kind: 'unreadable' }>;
    return cannotRead(options.mode, `${first.command} failed (${first.why})`, { reads });
  }
  const dumps: Dump[] = outcomes.flatMap((outcome) => (outcome.kind === 'read' ? [outcome.dump] : []));
  if (dumps.length === 0) return cannotRead(options.mode, 'neither iptables-save nor nft is installed', { reads });
  const analysis = analyzeDumps(spec, dumps, { families: options.families, ...(options.sampleDestinations ? { sampleDestinations: options.sampleDestinations } : {}) });
  if (analysis.kind === 'parse-error') {
    const { error } = analysis;
    const message = `the rules printed by ${error.source} do not parse (line ${error.line}: ${error.message})`;
    return { status: 'unknown', reason: 'RulesUnparseable', message, evidence: [message], report: { reads, parseError: error } };
  }
  const report = { reads, ...reportOf(analysis) };
  const { check, merged } = analysis;
  const notes = merged.notes.filter((note) => note.startsWith('rules are split'));
  if (check.status === 'passed') {
    const message = `the rules send all ${check.answers.length} packet questions where the configuration expects (${merged.backendsWithRules.join(', ') || 'no backend'})`;
    return { status: 'passed', message, evidence: [message, ...notes], report };
  }
  const first = check.findings[0];
  const message = first?.message ?? 'no packet questions could be asked of these rules';
  const evidence = [...check.findings.slice(0, 5).map((finding) => finding.message), ...notes];
  return { status: check.status, reason: first?.reason ?? 'RulesUnknownMatch', message, evidence, report };
}

function describeRead(outcome: ReadOutcome): string {
  switch (outcome.kind) {
    case 'read':
      return `${outcome.dump.source}: ${outcome.dump.text.split('\n').filter((line) => line.startsWith('-A') || line.includes('"rule"')).length > 0 ? 'rules' : 'read'} (${outcome.dump.text.length} bytes)`;
    case 'absent':
      return `${outcome.command}: not installed`;
    case 'skipped':
      return `${outcome.command}: skipped, ${outcome.why}`;
    case 'unreadable':
      return `${outcome.command}: ${outcome.why}`;
  }
}
