import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const RECORD = fileURLToPath(new URL('../harness/record-loads.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'interlock-loads-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The modules `node dist/cli/main.js ARGS` loads: the project's own (under dist/) and node_modules'. */
function loads(...args: string[]): { own: string[]; packages: string[] } {
  const log = join(scratch, `${args.join('-') || 'none'}.log`);
  execFileSync(process.execPath, ['--import', RECORD, MAIN, ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', INTERLOCK_LOAD_LOG: log },
    stdio: 'ignore',
  });
  const urls = [...new Set(readFileSync(log, 'utf8').trim().split('\n'))].filter((url) => url.startsWith('file:'));
  const files = urls.map((url) => fileURLToPath(url));
  return {
    own: files.filter((file) => file.startsWith(DIST)).map((file) => file.slice(DIST.length)),
    packages: files
      .filter((file) => file.includes('/node_modules/'))
      .map((file) => file.split('/node_modules/')[1] ?? ''),
  };
}

// The command table is the one registry: help, a command's --help and the completion scripts read
// its rows and flag tables and load no runner (validate's and version's included) and no runtime
// adapter: no probe, netlink, rules reader, API client, logger or metrics.
// (--on-failure and --recheck-action name their choices from node-agent's core: data, no adapter.)
const ADAPTERS = /^(probe|netlink|kube|rules|validate|rules-check|node-agent\/cri|webhook|serve|output\/logger)[/.]/;
describe('help loads the flag tables, not the commands', () => {
  for (const args of [
    ['help'],
    ['help', 'validate'],
    ['node', '--help'],
    ['version', '--help'],
    ['completion', 'bash'],
  ]) {
    it(`interlock ${args.join(' ')}`, () => {
      const { own, packages } = loads(...args);
      const commands = own.filter((file) => file.startsWith('cli/commands/'));
      const runners = commands.filter((file) => !/[/-]flags\.js$/.test(file));
      expect(runners).toEqual(args[0] === 'completion' ? ['cli/commands/completion/run.js'] : []);
      expect(own.filter((file) => ADAPTERS.test(file))).toEqual([]);
      expect(commands.filter((file) => file.endsWith('/flags.js')).length).toBeGreaterThanOrEqual(7);
      expect(packages.filter((file) => /^(yaml|prom-client|pino|netlink)\//.test(file))).toEqual([]);
    });
  }

  it('a command that runs loads its run.ts', () => {
    const { own } = loads('manifest', '--mesh', 'linkerd');
    expect(own).toContain('cli/commands/manifest/run.js');
  });
});
