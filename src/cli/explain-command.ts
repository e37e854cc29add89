import { readFile } from 'node:fs/promises';
import type { Family } from '../addr/ip.js';
import { isConfigError } from '../config/config-error.js';
import { EXIT, failureExitCodeOf } from '../config/exit-codes.js';
import type { FlagSpec } from '../config/flag-spec.js';
import { buildInterceptionSpec, INTERCEPTION_FLAGS } from '../config/interception.js';
import { readRawOptions } from '../config/raw-options.js';
import { analyzeDumps, type Dump } from '../rules-check/analyze.js';
import type { Backend } from '../rules/model.js';
import type { CommandResult } from './command-result.js';
import { reportOf, reportText, specSummary } from '../rules-check/report.js';

export type ExplainResult = CommandResult;

const EXPLAIN_FLAGS: readonly FlagSpec[] = [
  { name: 'iptables-save', arity: 'value', placeholder: 'FILE', help: 'IPv4 iptables-save output (backend from its header, else --iptables-backend).' },
  { name: 'ip6tables-save', arity: 'value', placeholder: 'FILE', help: 'IPv6 ip6tables-save output.' },
  { name: 'iptables-legacy-save', arity: 'value', placeholder: 'FILE', help: 'IPv4 iptables-legacy-save output, when both backends were saved.' },
  { name: 'ip6tables-legacy-save', arity: 'value', placeholder: 'FILE', help: 'IPv6 ip6tables-legacy-save output.' },
  { name: 'iptables-backend', arity: 'value', placeholder: 'nft|legacy', help: 'Backend of --iptables-save/--ip6tables-save files whose header does not say (default nft).' },
  { name: 'nft-ruleset', arity: 'value', placeholder: 'FILE', help: 'Output of "nft -j list ruleset".' },
  { name: 'families', arity: 'value', placeholder: 'auto|ipv4|ipv6|ipv4,ipv6', help: 'Families to check (default auto: those the rules cover).' },
  { name: 'format', arity: 'value', placeholder: 'text|json', help: 'Report format (default text).' },
  { name: 'failure-exit-code', arity: 'value', placeholder: 'CODE', help: "Exit code when an expectation fails (default: the mesh's)." },
  { name: 'help', arity: 'switch', help: 'Show this help.' },
];

export const EXPLAIN_HELP = [
  'Usage: interlock explain [expectation flags] --iptables-save FILE [--ip6tables-save FILE] [--nft-ruleset FILE] [--format text|json]',
  '',
  'Runs the rules analysis of `interlock validate` on saved dumps: every packet question the',
  'configuration implies, where the rules send it, and which rule decided.',
  'Exit: 0 every expectation holds; the mesh failure code when one fails or cannot be decided;',
  '64 bad flags; 65 a dump does not parse; 66 a file cannot be read; 70 internal error.',
  '',
  ...[...INTERCEPTION_FLAGS, ...EXPLAIN_FLAGS].map((flag) => `  --${flag.name}${flag.placeholder ? ` ${flag.placeholder}` : ''}\n      ${flag.help}`),
  '',
].join('\n');

/** `interlock explain`: never exits the process and never throws; the caller prints and exits. */
export async function runExplain(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<ExplainResult> {
  try {
    return await explain(argv, env);
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    return { exitCode: EXIT.internalError, stdout: '', stderr: `interlock explain: internal error: ${message}\n` };
  }
}

function usage(message: string): ExplainResult {
  return { exitCode: EXIT.invalidConfig, stdout: '', stderr: `interlock explain: ${message}\n` };
}

async function explain(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<ExplainResult> {
  const read = readRawOptions(argv, env, [...INTERCEPTION_FLAGS, ...EXPLAIN_FLAGS]);
  if (!read.ok) return usage(read.error.message);
  const raw = read.options;
  if (raw.has('help')) return { exitCode: 0, stdout: EXPLAIN_HELP, stderr: '' };
  if (read.positionals.length > 0) return usage(`unexpected argument "${read.positionals[0]}"`);
  const spec = buildInterceptionSpec(raw);
  if (isConfigError(spec)) return usage(spec.message);

  const format = raw.get('format')?.value ?? 'text';
  if (format !== 'text' && format !== 'json') return usage(`--format=${JSON.stringify(format)}: expected text or json`);
  const failureExitCode = failureExitCodeOf(raw, spec.mesh);
  if (isConfigError(failureExitCode)) return usage(failureExitCode.message);
  const familiesText = (raw.get('families')?.value ?? 'auto').trim();
  let families: readonly Family[] | 'auto' = 'auto';
  if (familiesText !== 'auto') {
    const items = familiesText.split(',').map((item) => item.trim());
    if (items.length === 0 || !items.every((item) => item === 'ipv4' || item === 'ipv6')) return usage(`--families=${JSON.stringify(familiesText)}: expected auto, ipv4, ipv6 or ipv4,ipv6`);
    families = (['ipv4', 'ipv6'] as const).filter((family) => items.includes(family));
  }
  const backendText = (raw.get('iptables-backend')?.value ?? 'nft').trim();
  if (backendText !== 'nft' && backendText !== 'legacy') return usage(`--iptables-backend=${JSON.stringify(backendText)}: expected nft or legacy`);
  const defaultBackend: Backend = backendText === 'legacy' ? 'iptables-legacy' : 'iptables-nft';

  const wanted: Array<{ flag: string; family?: Family; backend: Backend | 'from-header' }> = [
    { flag: 'iptables-save', family: 'ipv4', backend: 'from-header' },
    { flag: 'ip6tables-save', family: 'ipv6', backend: 'from-header' },
    { flag: 'iptables-legacy-save', family: 'ipv4', backend: 'iptables-legacy' },
    { flag: 'ip6tables-legacy-save', family: 'ipv6', backend: 'iptables-legacy' },
    { flag: 'nft-ruleset', backend: 'nftables' },
  ];
  const dumps: Dump[] = [];
  for (const item of wanted) {
    const option = raw.get(item.flag);
    if (!option) continue;
    const path = option.value;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      const code = (error as { code?: string }).code ?? 'error';
      return { exitCode: EXIT.noInput, stdout: '', stderr: `interlock explain: cannot read ${option.source} ${path}: ${code}\n` };
    }
    if (item.backend === 'nftables' && text.trim() !== '' && !text.trimStart().startsWith('{')) {
      return { exitCode: EXIT.dataError, stdout: '', stderr: `interlock explain: ${path}:1: this is not JSON; save the ruleset with "nft -j list ruleset"\n` };
    }
    const backend = item.backend === 'from-header' ? backendFromHeader(text) ?? defaultBackend : item.backend;
    dumps.push({ backend, ...(item.family ? { family: item.family } : {}), source: path, text });
  }
  if (dumps.length === 0) return usage('give at least one dump: --iptables-save, --ip6tables-save or --nft-ruleset (see --help)');

  const analysis = analyzeDumps(spec, dumps, { families });
  if (analysis.kind === 'parse-error') {
    const { error } = analysis;
    return { exitCode: EXIT.dataError, stdout: '', stderr: `interlock explain: ${error.source}:${error.line}: ${error.message}\n` };
  }
  const report = reportOf(analysis);
  const exitCode = report.status === 'passed' ? 0 : failureExitCode;
  const stdout = format === 'json' ? `${JSON.stringify({ ...report, exitCode, configuration: specSummary(spec) }, null, 2)}\n` : reportText(report, specSummary(spec));
  return { exitCode, stdout, stderr: '' };
}

/** iptables-save's first line says which backend printed it: `(nf_tables)` or `(legacy)`. */
function backendFromHeader(text: string): Backend | undefined {
  const header = text.split('\n', 3).find((line) => line.startsWith('# Generated by'));
  if (header?.includes('(legacy)')) return 'iptables-legacy';
  if (header?.includes('(nf_tables)')) return 'iptables-nft';
  return undefined;
}
