import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/explain-command.js';
import { meshIdentity } from '../../src/mesh/meshes.js';
import { makeNamespace, removeNamespace } from '../ambient/dumps.js';

/**
 * Kuma's validator proves one path: uid 5678 dialling 127.0.0.6 over loopback, which only the
 * rule that sends the proxy's own loopback TCP to the inbound redirect catches. A ruleset that
 * keeps that rule but never redirects the application's outbound or inbound TCP passes Kuma's
 * probe (replayed here as it runs: uid 5678, 127.0.0.1 -> 127.0.0.6, a listener on the inbound
 * port) and fails Interlock's rules check. The ruleset is Kuma's own golden with the two jumps that
 * capture the application removed; nothing leaves the namespace (it has only lo).
 */
const GOLDEN = path.resolve(
  import.meta.dirname,
  '../fixtures/meshes/kuma/2.14.3/transparentproxy/debian-12-default.iptables-nft.golden',
);
const namespace = makeNamespace('kuma-probe');
const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-kuma-probe-'));
afterAll(() => {
  removeNamespace(namespace);
  rmSync(scratch, { recursive: true, force: true });
});
const { inboundPort, proxyUids } = meshIdentity('kuma').capture;
const uid = String(proxyUids?.[0]);

/** Kuma's probe, replayed: listen on the inbound port, dial 127.0.0.6 from 127.0.0.1 as uid 5678. */
const PROBE = `
const net = require('node:net');
const server = net.createServer((socket) => { socket.end('ok'); }).listen(${inboundPort}, '127.0.0.1', () => {
  const client = net.connect({ host: '127.0.0.6', port: 40123, localAddress: '127.0.0.1' });
  client.setTimeout(2000, () => { console.log('timeout'); process.exit(1); });
  client.on('data', () => { console.log('captured'); process.exit(0); });
  client.on('error', (error) => { console.log(error.code); process.exit(1); });
});`;

function kumaProbe(): { status: number | null; stdout: string } {
  const argv = ['netns', 'exec', namespace, 'setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups'];
  const run = spawnSync('ip', [...argv, process.execPath, '-e', PROBE], { encoding: 'utf8', timeout: 10_000 });
  return { status: run.status, stdout: run.stdout.trim() };
}

function load(rules: string): string {
  execFileSync('ip', ['netns', 'exec', namespace, 'iptables-nft-restore'], { input: rules });
  return execFileSync('ip', ['netns', 'exec', namespace, 'iptables-nft-save'], { encoding: 'utf8' });
}

describe("Kuma's probe beside Interlock's rules check", () => {
  const golden = readFileSync(GOLDEN, 'utf8').replaceAll('ifPlaceholder', 'lo');
  const weakened = golden
    .split('\n')
    .filter(
      (line) => !/^-A (PREROUTING|KUMA_MESH_OUTBOUND) .*-j (KUMA_MESH_INBOUND|KUMA_MESH_OUTBOUND_REDIRECT)$/.test(line),
    )
    .join('\n');

  it('the weakened ruleset lost exactly the two jumps that capture the application', () => {
    expect(golden.split('\n').length - weakened.split('\n').length).toBe(2);
  });

  it("with no rules Kuma's probe fails, so it can fail", () => {
    load('*nat\n:PREROUTING ACCEPT\n:INPUT ACCEPT\n:OUTPUT ACCEPT\n:POSTROUTING ACCEPT\nCOMMIT\n');
    expect(kumaProbe()).toEqual({ status: 1, stdout: 'ECONNREFUSED' });
  });

  it("Kuma's probe passes the weakened ruleset; Interlock's rules check fails it, naming the chain", async () => {
    const dump = load(weakened);
    expect(kumaProbe()).toEqual({ status: 0, stdout: 'captured' });
    const file = path.join(scratch, 'weakened.v4');
    writeFileSync(file, dump);
    const result = await runExplain(['--mesh=kuma', '--family=ipv4', `--iptables-save=${file}`], {
      INTERLOCK_DNS_CAPTURE: 'false',
    });
    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).toMatch(/FAILED/);
    expect(result.stdout).toContain('KUMA_MESH_OUTBOUND');
  });

  it('and the whole golden passes both', async () => {
    const dump = load(golden);
    expect(kumaProbe()).toEqual({ status: 0, stdout: 'captured' });
    const file = path.join(scratch, 'golden.v4');
    writeFileSync(file, dump);
    const result = await runExplain(['--mesh=kuma', '--family=ipv4', `--iptables-save=${file}`], {
      INTERLOCK_DNS_CAPTURE: 'false',
    });
    expect(result.exitCode).toBe(0);
  });
});
