import { readFile } from 'node:fs/promises';
import { execa } from 'execa';
import type { Family } from '../../addr/ip.js';
import type { Backend } from '../model.js';
import { classifyCommandResult, legacyListingOf, legacyNamesPath, type NamesRead, type ReadOutcome } from './classify.js';

export type { ReadOutcome } from './classify.js';

interface Command {
  readonly file: string;
  readonly args: readonly string[];
  readonly backend: Backend;
  readonly family?: Family;
}

/**
 * Reads every backend the kernel may hold rules in. Never `-t nat` for legacy: that creates the
 * legacy nat table as a side effect; legacy is only read when /proc lists legacy tables. When
 * /proc cannot be read (it is root-only), legacy is reported `not-listable`, never as empty.
 */
export async function readLiveRules(families: readonly Family[], timeoutMs: number): Promise<ReadOutcome[]> {
  const commands: Command[] = [];
  const outcomes: ReadOutcome[] = [];
  for (const family of families) {
    const prefix = family === 'ipv4' ? 'iptables' : 'ip6tables';
    commands.push({ file: `${prefix}-nft-save`, args: [], backend: 'iptables-nft', family });
    const listing = legacyListingOf(family, await readNames(legacyNamesPath(family)));
    const legacy = `${prefix}-legacy-save`;
    if (listing.kind === 'tables') commands.push({ file: legacy, args: [], backend: 'iptables-legacy', family });
    else if (listing.kind === 'none') outcomes.push({ kind: 'skipped', command: legacy, why: listing.why });
    else outcomes.push({ kind: 'not-listable', command: legacy, family, path: legacyNamesPath(family), uid: process.getuid?.(), why: listing.why });
  }
  commands.push({ file: 'nft', args: ['-j', 'list', 'ruleset'], backend: 'nftables' });
  const results = await Promise.all(commands.map((command) => runOne(command, timeoutMs)));
  return [...results, ...outcomes];
}

async function readNames(path: string): Promise<NamesRead> {
  try {
    return { ok: true, text: await readFile(path, 'utf8') };
  } catch (error) {
    return { ok: false, code: (error as { code?: string }).code, message: error instanceof Error ? error.message : String(error) };
  }
}

async function runOne(command: Command, timeoutMs: number): Promise<ReadOutcome> {
  const label = [command.file, ...command.args].join(' ');
  const spec = { label, backend: command.backend, ...(command.family ? { family: command.family } : {}) };
  try {
    const result = await execa(command.file, command.args, { reject: false, timeout: timeoutMs, stdin: 'ignore', env: { LC_ALL: 'C' } });
    const code = (result as { code?: string }).code;
    return classifyCommandResult(
      spec,
      {
        ...(code !== undefined ? { code } : {}),
        timedOut: Boolean(result.timedOut),
        exitCode: result.exitCode,
        stdout: String(result.stdout ?? ''),
        stderr: String(result.stderr ?? ''),
      },
      timeoutMs,
    );
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ENOENT') return { kind: 'absent', command: label };
    return { kind: 'unreadable', command: label, why: error instanceof Error ? error.message : String(error) };
  }
}
