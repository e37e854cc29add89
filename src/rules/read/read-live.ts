import { readFile } from 'node:fs/promises';
import { execa } from 'execa';
import type { Family } from '../../addr/ip.js';
import { fail, ok } from '../../reason/result.js';
import type { Backend } from '../model.js';
import {
  classifyToolRun,
  legacyListingOf,
  legacyNamesPath,
  outputCapOf,
  type NamesRead,
  type ReadOutcome,
} from './classify.js';

export type { ReadOutcome } from './classify.js';

/** One save/list tool to run. */
export interface ReaderCommand {
  readonly file: string;
  readonly args: readonly string[];
  readonly backend: Backend;
  readonly family?: Family;
}

/**
 * Reads every backend the kernel may hold rules in. Never `-t nat` for legacy: that creates the
 * legacy nat table as a side effect; legacy is only read when /proc lists legacy tables. When
 * /proc cannot be read (it is root-only), legacy is reported `not-listable`, never as empty.
 * With `netnsPath` (the node agent's re-check), every read runs in a short-lived child that
 * entered that network namespace (`nsenter --net=`), never in this process.
 */
export async function readLiveRules(
  families: readonly Family[],
  timeoutMs: number,
  netnsPath?: string,
): Promise<ReadOutcome[]> {
  const commands: ReaderCommand[] = [];
  const outcomes: ReadOutcome[] = [];
  const names = netnsPath === undefined ? readNames : (path: string) => readNamesIn(netnsPath, path, timeoutMs);
  for (const family of families) {
    const prefix = family === 'ipv4' ? 'iptables' : 'ip6tables';
    commands.push({ file: `${prefix}-nft-save`, args: [], backend: 'iptables-nft', family });
    const listing = legacyListingOf(family, await names(legacyNamesPath(family)));
    const legacy = `${prefix}-legacy-save`;
    if (listing.kind === 'tables') commands.push({ file: legacy, args: [], backend: 'iptables-legacy', family });
    else if (listing.kind === 'none') outcomes.push({ kind: 'skipped', command: legacy, why: listing.why });
    else
      outcomes.push({
        kind: 'not-listable',
        command: legacy,
        family,
        path: legacyNamesPath(family),
        uid: process.getuid?.(),
        why: listing.why,
      });
  }
  commands.push({ file: 'nft', args: ['-j', 'list', 'ruleset'], backend: 'nftables' });
  const run = netnsPath === undefined ? commands : commands.map((command) => inNetns(netnsPath, command));
  const results = await Promise.all(run.map((command) => runReader(command, timeoutMs)));
  return [...results.map(absentInNetns), ...outcomes];
}

/** nsenter could not exec the tool: not installed, as ENOENT says without nsenter. */
function absentInNetns(outcome: ReadOutcome): ReadOutcome {
  return outcome.kind === 'unreadable' && /^exit 127: nsenter: failed to execute \S+: No such file/.test(outcome.why)
    ? { kind: 'absent', command: outcome.command }
    : outcome;
}

function inNetns(netnsPath: string, command: ReaderCommand): ReaderCommand {
  return { ...command, file: 'nsenter', args: [`--net=${netnsPath}`, command.file, ...command.args] };
}

/** The legacy table names as a child in the namespace sees them (/proc/net follows the reader's namespace). */
async function readNamesIn(netnsPath: string, path: string, timeoutMs: number): Promise<NamesRead> {
  const result = await execa('nsenter', [`--net=${netnsPath}`, 'cat', path], {
    reject: false,
    timeout: timeoutMs,
    maxBuffer: 64 * 1024,
    stdin: 'ignore',
    env: { LC_ALL: 'C' },
  });
  if (result.exitCode === 0) return ok(String(result.stdout));
  const stderr = String(result.stderr ?? '');
  const code = /^cat: .*No such file/.test(stderr) ? 'ENOENT' : /Permission denied/.test(stderr) ? 'EACCES' : 'EIO';
  return fail(code, stderr.trim().split('\n')[0] || `nsenter exited ${String(result.exitCode)}`);
}

async function readNames(path: string): Promise<NamesRead> {
  try {
    return ok(await readFile(path, 'utf8'));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return fail((error as { code?: string }).code ?? message, message);
  }
}

/** Runs one tool within `timeoutMs`, stopping it once it prints more than its cap. */
export async function runReader(command: ReaderCommand, timeoutMs: number): Promise<ReadOutcome> {
  const label = [command.file, ...command.args].join(' ');
  const spec = { label, backend: command.backend, ...(command.family ? { family: command.family } : {}) };
  const started = performance.now();
  try {
    const result = await execa(command.file, command.args, {
      reject: false,
      timeout: timeoutMs,
      maxBuffer: outputCapOf(command.backend),
      stdin: 'ignore',
      stripFinalNewline: false,
      env: { LC_ALL: 'C' },
    });
    const code = (result as { code?: string }).code;
    return classifyToolRun(spec, {
      ...(code !== undefined ? { code } : {}),
      timedOut: Boolean(result.timedOut),
      overflowed: Boolean(result.isMaxBuffer),
      exitCode: result.exitCode,
      stdout: String(result.stdout ?? ''),
      stderr: String(result.stderr ?? ''),
      elapsedMs: performance.now() - started,
    });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ENOENT') return { kind: 'absent', command: label };
    return { kind: 'unreadable', command: label, why: error instanceof Error ? error.message : String(error) };
  }
}
