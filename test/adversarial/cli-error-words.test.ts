import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateConfigWithPodMetadata } from '../../src/cli/commands/validate/pod-metadata-files.js';
import { parseCommandLine } from '../../src/config/parse-command-line.js';
import { VALIDATE_FLAGS } from '../../src/config/validate-config.js';
import { runCommand } from './cli-run.js';

/** An errno name (ENOENT) or a Node/OpenSSL code (ERR_...) reaching the user; ERROR is a word. */
const RAW_CODE = /\b(?!ERROR\b)E[A-Z]{3,}\b|ERR_|error:[0-9A-F]{8}/;

const dir = mkdtempSync(path.join(tmpdir(), 'interlock-error-words-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const missing = path.join(dir, 'missing');
const notPem = path.join(dir, 'not.pem');
const aDir = path.join(dir, 'a-dir');
const locked = path.join(dir, 'locked', 'file');
writeFileSync(notPem, 'not a certificate\n');
mkdirSync(aDir);
mkdirSync(path.dirname(locked), { mode: 0o000 });
// A configuration that names a plugin, so the missing --cni-bin-dir is looked in.
const confDir = path.join(dir, 'net.d');
mkdirSync(confDir);
writeFileSync(
  path.join(confDir, '10-pod.conflist'),
  JSON.stringify({ cniVersion: '1.0.0', name: 'pod', plugins: [{ type: 'bridge' }, { type: 'linkerd-cni' }] }),
);

/** Every command that reads a file, given each kind of bad file (validate and the drop-ins probe: not run here). */
const BAD_INPUTS: ReadonlyArray<readonly string[]> = [
  ['inject', '-f', missing],
  ['inject', '-f', path.join(notPem, 'x')],
  ['explain', '--mesh', 'linkerd', '--iptables-save', missing],
  ['explain', '--mesh', 'linkerd', '--iptables-save', aDir],
  ['explain', '--mesh', 'linkerd', '--nft-ruleset', path.join(notPem, 'x')],
  ['manifest', '--webhook', '--ca-bundle', missing],
  ['manifest', '--webhook', '--ca-bundle', aDir],
  ['cni-check', '--mesh', 'linkerd', '--cni-conf-dir', missing],
  ['cni-check', '--mesh', 'linkerd', '--cni-conf-dir', notPem],
  ['cni-check', '--mesh', 'linkerd', '--cni-conf-dir', confDir, '--cni-bin-dir', missing],
  ['webhook', '--tls-cert', missing, '--tls-key', missing],
  ['webhook', '--tls-cert', notPem, '--tls-key', notPem],
  ['webhook', '--tls-cert', aDir, '--tls-key', aDir],
];

describe('no raw error code reaches the user', () => {
  it('the check can fail', () => {
    for (const raw of [
      'cannot read "x": ENOENT',
      'ERR_INVALID_ARG_TYPE',
      '(error:0480006C:PEM routines::no start line)',
    ])
      expect(raw).toMatch(RAW_CODE);
    expect('ERROR  plugin-missing: x').not.toMatch(RAW_CODE);
  });

  for (const argv of BAD_INPUTS)
    it(`interlock ${argv.join(' ').replaceAll(dir, 'DIR')}: a sentence naming the file, exit non-zero`, async () => {
      const run = await runCommand(argv, { guardMs: 15_000 });
      expect(run.hung).toBe(false);
      expect(run.exitCode).not.toBe(0);
      // cni-check prints its report on stdout; every other command's error is on stderr.
      const said = `${run.stdout}${run.stderr}`;
      expect(said).not.toMatch(RAW_CODE);
      expect(said).toMatch(new RegExp(path.basename(argv.at(-1) ?? '').replace('.', '\\.')));
    });

  it('validate --pod-annotations (read before any probe, checked in-process): a sentence', () => {
    for (const file of [missing, aDir, locked]) {
      const parsed = parseCommandLine('validate', ['--mesh', 'linkerd', '--pod-annotations', file], {}, VALIDATE_FLAGS);
      expect(parsed.ok).toBe(true);
      if (!parsed.ok) continue;
      const config = validateConfigWithPodMetadata(parsed.value);
      expect(config.ok).toBe(false);
      if (!config.ok) {
        expect(config.error.message).not.toMatch(RAW_CODE);
        expect(config.error.message).toContain(file);
      }
    }
  });
});
