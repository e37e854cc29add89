import type { Family } from '../../addr/ip.js';
import { fail, ok } from '../../reason/result.js';
import {
  classifyToolRun,
  legacyNamesPath,
  outputCapOf,
  type NamesRead,
  type ReadOutcome,
} from '../../rules/read/classify.js';
import { runBoundedChild } from '../../rules/read/bounded-child.js';
import {
  absentWhenNotInstalled,
  isReaderCommand,
  legacyReader,
  NFT_READER,
  nftSaveReader,
  READER_LIMIT,
  type ReaderCommand,
} from '../../rules/read/reader-plan.js';

/** The tools' environment: the C locale, and a PATH that finds the savers in /usr/sbin (nsenter execs by PATH). */
const TOOL_ENV = {
  LC_ALL: 'C',
  PATH: process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
};

/**
 * Run between `setns` and the tool: the tool parses rules the pod's tenant wrote, so it gets
 * CAP_NET_ADMIN and CAP_NET_RAW (what the savers need) and neither CAP_SYS_ADMIN (which `setns`
 * needed, and is done) nor CAP_SETPCAP (which the drop needs). A root child's permitted set is its
 * bounding set after exec, hence the bounding set; the inheritable set, so no ambient copy remains.
 */
const DROP = ['setpriv', '--bounding-set=-sys_admin,-setpcap', '--inh-caps=-sys_admin,-setpcap', '--'];

/**
 * One child that entered the pod's network namespace and ran one tool there: `nsenter
 * --net=PATH prlimit (its memory limit) setpriv (drop SYS_ADMIN) TOOL`, its output streamed
 * against the cap and the deadline (src/rules/read/bounded-child.ts).
 */
export function inNetns(netnsPath: string, file: string, args: readonly string[], cap: number, timeoutMs: number) {
  return runBoundedChild('nsenter', [`--net=${netnsPath}`, ...READER_LIMIT, ...DROP, file, ...args], {
    stdoutCap: cap,
    timeoutMs,
    env: TOOL_ENV,
  });
}

async function runTool(netnsPath: string, tool: ReaderCommand, timeoutMs: number): Promise<ReadOutcome> {
  const label = `nsenter --net=${netnsPath} ${[...READER_LIMIT, ...DROP, tool.file, ...tool.args].join(' ')}`;
  const run = await inNetns(netnsPath, tool.file, tool.args, outputCapOf(tool.backend), timeoutMs);
  const outcome = classifyToolRun(
    { label, backend: tool.backend, ...(tool.family ? { family: tool.family } : {}) },
    run,
  );
  return absentWhenNotInstalled(outcome, label);
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
 * The pod's rules, by the plan validate's reader follows (src/rules/read/reader-plan.ts), each
 * read in a child that entered the pod's namespace, never in the agent's process.
 */
export async function readPodRules(
  netnsPath: string,
  families: readonly Family[],
  timeoutMs: number,
): Promise<ReadOutcome[]> {
  const perFamily = families.map(async (family) => {
    const [saved, names] = await Promise.all([
      runTool(netnsPath, nftSaveReader(family), timeoutMs),
      legacyNames(netnsPath, legacyNamesPath(family), timeoutMs),
    ]);
    const legacy = legacyReader(family, names);
    return [saved, isReaderCommand(legacy) ? await runTool(netnsPath, legacy, timeoutMs) : legacy];
  });
  const [nftOutcome, ...familyOutcomes] = await Promise.all([runTool(netnsPath, NFT_READER, timeoutMs), ...perFamily]);
  return [...familyOutcomes.flat(), nftOutcome];
}
