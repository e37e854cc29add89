import { readFile } from 'node:fs/promises';
import { execa } from 'execa';
import type { Family } from '../../addr/ip.js';
import { fail, ok } from '../../reason/result.js';
import { classifyToolRun, legacyNamesPath, outputCapOf, type NamesRead, type ReadOutcome } from './classify.js';
import { isReaderCommand, legacyReader, NFT_READER, nftSaveReader, type ReaderCommand } from './reader-plan.js';

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
