import { readFile } from 'node:fs/promises';
import type { Family } from '../../addr/ip.js';
import { fail, ok } from '../../reason/result.js';
import { classifyToolRun, legacyNamesPath, outputCapOf, type NamesRead, type ReadOutcome } from './classify.js';
import { runBoundedChild } from './bounded-child.js';
import {
  absentWhenNotInstalled,
  isReaderCommand,
  legacyReader,
  NFT_READER,
  nftSaveReader,
  READER_LIMIT,
  type ReaderCommand,
} from './reader-plan.js';

export type { ReadOutcome } from './classify.js';

/**
 * Reads every backend the kernel may hold rules in. Never `-t nat` for legacy: that creates the
 * legacy nat table as a side effect; legacy is only read when /proc lists legacy tables. When
 * /proc cannot be read (it is root-only), legacy is reported `not-listable`, never as empty.
 */
export async function readLiveRules(families: readonly Family[], timeoutMs: number): Promise<ReadOutcome[]> {
  const commands: ReaderCommand[] = [];
  const outcomes: ReadOutcome[] = [];
  for (const family of families) {
    commands.push(nftSaveReader(family));
    const legacy = legacyReader(family, await readNames(legacyNamesPath(family)));
    if (isReaderCommand(legacy)) commands.push(legacy);
    else outcomes.push(legacy);
  }
  commands.push(NFT_READER);
  const results = await Promise.all(commands.map((command) => runReader(command, timeoutMs)));
  return [...results, ...outcomes];
}

async function readNames(path: string): Promise<NamesRead> {
  try {
    return ok(await readFile(path, 'utf8'));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return fail((error as { code?: string }).code ?? message, message);
  }
}

/**
 * Runs one tool within `timeoutMs` under its own memory limit (READER_LIMIT), streaming its
 * output and stopping it once it prints more than a pod's rules may take.
 */
export async function runReader(command: ReaderCommand, timeoutMs: number): Promise<ReadOutcome> {
  const label = [command.file, ...command.args].join(' ');
  const spec = { label, backend: command.backend, ...(command.family ? { family: command.family } : {}) };
  const [wrapper = 'prlimit', ...limit] = READER_LIMIT;
  const run = await runBoundedChild(wrapper, [...limit, command.file, ...command.args], {
    stdoutCap: outputCapOf(command.backend),
    timeoutMs,
    env: { LC_ALL: 'C', ...(process.env.PATH !== undefined ? { PATH: process.env.PATH } : {}) },
  });
  // The wrapper itself missing is no verdict on the tool: its bound could not be applied.
  if (run.code === 'ENOENT')
    return {
      kind: 'unreadable',
      command: label,
      why: `${wrapper} is not installed: every reader runs under its memory limit`,
    };
  return absentWhenNotInstalled(classifyToolRun(spec, run), label);
}
