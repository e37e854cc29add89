import { readFile } from 'node:fs/promises';
import { execa } from 'execa';
import type { Family } from '../../addr/ip.js';
import type { Dump } from '../analyze.js';
import type { Backend } from '../model.js';

/** What happened to one read: the dump, a tool that is not installed, or a read that failed. */
export type ReadOutcome =
  | { readonly kind: 'read'; readonly dump: Dump }
  | { readonly kind: 'absent'; readonly command: string }
  | { readonly kind: 'skipped'; readonly command: string; readonly why: string }
  | { readonly kind: 'unreadable'; readonly command: string; readonly why: string };

interface Command {
  readonly file: string;
  readonly args: readonly string[];
  readonly backend: Backend;
  readonly family?: Family;
}

/**
 * Reads every backend the kernel may hold rules in. Never `-t nat` for legacy: that creates the
 * legacy nat table as a side effect; legacy is only read when /proc lists legacy tables at all.
 */
export async function readLiveRules(families: readonly Family[], timeoutMs: number): Promise<ReadOutcome[]> {
  const commands: Command[] = [];
  const outcomes: ReadOutcome[] = [];
  for (const family of families) {
    const prefix = family === 'ipv4' ? 'iptables' : 'ip6tables';
    commands.push({ file: `${prefix}-nft-save`, args: [], backend: 'iptables-nft', family });
    const names = await legacyTableNames(family);
    if (names.length > 0) commands.push({ file: `${prefix}-legacy-save`, args: [], backend: 'iptables-legacy', family });
    else outcomes.push({ kind: 'skipped', command: `${prefix}-legacy-save`, why: `no legacy ${family} tables in /proc/net` });
  }
  commands.push({ file: 'nft', args: ['-j', 'list', 'ruleset'], backend: 'nftables' });
  const results = await Promise.all(commands.map((command) => runOne(command, timeoutMs)));
  return [...results, ...outcomes];
}

async function legacyTableNames(family: Family): Promise<string[]> {
  try {
    const text = await readFile(family === 'ipv4' ? '/proc/net/ip_tables_names' : '/proc/net/ip6_tables_names', 'utf8');
    return text.split('\n').filter((line) => line.trim() !== '');
  } catch {
    // No x_tables module loaded: there can be no legacy rules.
    return [];
  }
}

async function runOne(command: Command, timeoutMs: number): Promise<ReadOutcome> {
  const label = [command.file, ...command.args].join(' ');
  try {
    const result = await execa(command.file, command.args, { reject: false, timeout: timeoutMs, stdin: 'ignore', env: { LC_ALL: 'C' } });
    if ((result as { code?: string }).code === 'ENOENT') return { kind: 'absent', command: label };
    if (result.timedOut) return { kind: 'unreadable', command: label, why: `timed out after ${timeoutMs} ms` };
    if (result.exitCode !== 0) {
      const stderr = String(result.stderr ?? '').trim().split('\n')[0] ?? '';
      return { kind: 'unreadable', command: label, why: `exit ${String(result.exitCode)}${stderr ? `: ${stderr}` : ''}` };
    }
    const dump: Dump = { backend: command.backend, ...(command.family ? { family: command.family } : {}), source: label, text: String(result.stdout ?? '') };
    return { kind: 'read', dump };
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ENOENT') return { kind: 'absent', command: label };
    return { kind: 'unreadable', command: label, why: error instanceof Error ? error.message : String(error) };
  }
}
