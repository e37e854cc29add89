import { execFile } from 'node:child_process';
import type { Family } from '../../addr/ip.js';
import { fail, ok } from '../../reason/result.js';
import {
  classifyToolRun,
  legacyListingOf,
  legacyNamesPath,
  outputCapOf,
  type NamesRead,
  type ReadOutcome,
} from '../../rules/read/classify.js';
import type { Backend } from '../../rules/model.js';

interface Tool {
  readonly file: string;
  readonly args: readonly string[];
  readonly backend: Backend;
  readonly family?: Family;
}

/** The tools' environment: the C locale, and a PATH that finds the savers in /usr/sbin (nsenter execs by PATH). */
const TOOL_ENV = {
  LC_ALL: 'C',
  PATH: process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
};

interface ChildRun {
  readonly code?: string;
  readonly timedOut: boolean;
  readonly overflowed: boolean;
  readonly exitCode: number | undefined;
  readonly stdout: string;
  readonly stderr: string;
  readonly elapsedMs: number;
}

/**
 * Run between `setns` and the tool: the tool parses rules the pod's tenant wrote, so it gets
 * CAP_NET_ADMIN and CAP_NET_RAW (what the savers need) and neither CAP_SYS_ADMIN (which `setns`
 * needed, and is done) nor CAP_SETPCAP (which the drop needs). A root child's permitted set is its
 * bounding set after exec, hence the bounding set; the inheritable set, so no ambient copy remains.
 */
const DROP = ['setpriv', '--bounding-set=-sys_admin,-setpcap', '--inh-caps=-sys_admin,-setpcap', '--'];

/**
 * Each reading child's address space. `nft -j` builds its whole listing in memory before printing
 * (46 MB of RSS for 5,000 rules, 2026-11-28, the 2-core build machine), so the output cap bounds
 * what the agent reads, not what the child takes from the agent's cgroup: past this, the tool
 * fails to allocate and its read is unreadable (`rules-unreadable`), never the agent's OOM. The
 * tools list a few-hundred-rule mesh ruleset in under 16 MiB.
 */
const CHILD_ADDRESS_SPACE_BYTES = 64 * 1024 * 1024;
const LIMIT = ['prlimit', `--as=${CHILD_ADDRESS_SPACE_BYTES}`, '--'];

/**
 * One child that entered the pod's network namespace and ran one tool there: `nsenter
 * --net=PATH setpriv (drop SYS_ADMIN) TOOL`, with a deadline and an output cap.
 * node:child_process, not execa: a sweep of 110 pods spawns 330 children, and execa costs the
 * agent twice the CPU per spawn.
 */
function inNetns(netnsPath: string, file: string, args: readonly string[], cap: number, timeoutMs: number) {
  const started = performance.now();
  return new Promise<ChildRun>((resolve) => {
    execFile(
      'nsenter',
      [`--net=${netnsPath}`, ...LIMIT, ...DROP, file, ...args],
      {
        timeout: Math.max(1, Math.ceil(timeoutMs)),
        maxBuffer: cap,
        env: TOOL_ENV,
        encoding: 'utf8',
        killSignal: 'SIGKILL',
      },
      (error, stdout, stderr) => {
        const failure = error as (Error & { code?: string | number; killed?: boolean }) | null;
        resolve({
          ...(typeof failure?.code === 'string' && failure.code !== 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER'
            ? { code: failure.code }
            : {}),
          timedOut: failure?.killed === true && failure.code !== 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER',
          overflowed: failure?.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER',
          exitCode: failure ? (typeof failure.code === 'number' ? failure.code : undefined) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
          elapsedMs: performance.now() - started,
        });
      },
    );
  });
}

async function runTool(netnsPath: string, tool: Tool, timeoutMs: number): Promise<ReadOutcome> {
  const label = `nsenter --net=${netnsPath} ${[...LIMIT, ...DROP, tool.file, ...tool.args].join(' ')}`;
  const run = await inNetns(netnsPath, tool.file, tool.args, outputCapOf(tool.backend), timeoutMs);
  const outcome = classifyToolRun(
    { label, backend: tool.backend, ...(tool.family ? { family: tool.family } : {}) },
    run,
  );
  // setpriv could not exec the tool: not installed, as ENOENT says without nsenter.
  return outcome.kind === 'unreadable' &&
    /^exit 127: (?:nsenter|setpriv|prlimit): failed to execute \S+: No such file/.test(outcome.why)
    ? { kind: 'absent', command: label }
    : outcome;
}

/** The legacy table names as a child in the namespace sees them (/proc/net follows the reader's namespace). */
async function legacyNames(netnsPath: string, path: string, timeoutMs: number): Promise<NamesRead> {
  const run = await inNetns(netnsPath, 'cat', [path], 64 * 1024, timeoutMs);
  if (run.exitCode === 0) return ok(run.stdout);
  const code = /^cat: .*No such file/.test(run.stderr)
    ? 'ENOENT'
    : /^cat: .*Permission denied/.test(run.stderr)
      ? 'EACCES'
      : 'EIO';
  return fail(code, run.stderr.trim().split('\n')[0] || `nsenter exited ${String(run.exitCode)}`);
}

/**
 * The pod's rules, as validate's reader reads its own (src/rules/read/read-live.ts): every
 * backend, legacy only where /proc lists legacy tables (never `-t nat`, which would create one),
 * each read in a child that entered the pod's namespace, never in the agent's process.
 */
export async function readPodRules(
  netnsPath: string,
  families: readonly Family[],
  timeoutMs: number,
): Promise<ReadOutcome[]> {
  const nft: Tool = { file: 'nft', args: ['-j', 'list', 'ruleset'], backend: 'nftables' };
  const perFamily = families.map(async (family) => {
    const prefix = family === 'ipv4' ? 'iptables' : 'ip6tables';
    const [saved, names] = await Promise.all([
      runTool(netnsPath, { file: `${prefix}-nft-save`, args: [], backend: 'iptables-nft', family }, timeoutMs),
      legacyNames(netnsPath, legacyNamesPath(family), timeoutMs),
    ]);
    const listing = legacyListingOf(family, names);
    const legacy = `${prefix}-legacy-save`;
    if (listing.kind === 'tables')
      return [
        saved,
        await runTool(netnsPath, { file: legacy, args: [], backend: 'iptables-legacy', family }, timeoutMs),
      ];
    if (listing.kind === 'none') return [saved, { kind: 'skipped', command: legacy, why: listing.why } as const];
    const notListable: ReadOutcome = {
      kind: 'not-listable',
      command: legacy,
      family,
      path: legacyNamesPath(family),
      uid: process.getuid?.(),
      why: listing.why,
    };
    return [saved, notListable];
  });
  const [nftOutcome, ...familyOutcomes] = await Promise.all([runTool(netnsPath, nft, timeoutMs), ...perFamily]);
  return [...familyOutcomes.flat(), nftOutcome];
}
