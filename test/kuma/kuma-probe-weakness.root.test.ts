import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { validatorArgs } from '../../src/inject/validator-container.js';
import { meshIdentity } from '../../src/mesh/meshes.js';
import { collect, usePods, type PodNamespace } from '../harness/pod-namespace.js';

/**
 * Kuma's validator proves one path: uid 5678 dialling 127.0.0.6 over loopback (from 127.0.0.1, a
 * listener on the inbound port: pkg/transparentproxy/validate/validator.go, v2.14.3), which only
 * the rule that sends the proxy's own loopback TCP to the inbound redirect catches. A ruleset that
 * keeps that rule but never redirects the application's outbound or inbound TCP passes Kuma's
 * probe. Side by side, in a pod namespace whose only way out is a sink that rejects (no packet
 * leaves the machine): Kuma's probe replayed as it runs, the application's own connection, and
 * Interlock's validator as `manifest` and `inject` print it with the rules check, and offline
 * `explain`. The weakened ruleset is Kuma's own golden with the two jumps that capture the
 * application removed.
 */
const GOLDEN = path.resolve(
  import.meta.dirname,
  '../fixtures/meshes/kuma/2.14.3/transparentproxy/debian-12-default.iptables-nft.golden',
);
const pod = usePods(afterEach);
const kuma = meshIdentity('kuma');
const { inboundPort, outboundPort, proxyUids } = kuma.capture;
const proxyUid = proxyUids?.[0];
if (proxyUid === undefined) throw new Error("Kuma's preset names no proxy uid");
/** An application's uid: anyone but the proxy. */
const APP_UID = 1000;
/** A documentation address the pod routes to the sink, as a real destination would be. */
const REMOTE = '203.0.113.7';

const golden = readFileSync(GOLDEN, 'utf8').replaceAll('ifPlaceholder', 'lo');
const weakened = golden
  .split('\n')
  .filter(
    (line) => !/^-A (PREROUTING|KUMA_MESH_OUTBOUND) .*-j (KUMA_MESH_INBOUND|KUMA_MESH_OUTBOUND_REDIRECT)$/.test(line),
  )
  .join('\n');

/**
 * A listener on `listen` (standing in for the proxy's port), then one connection as `uid` to
 * `host:port` from `from`: `captured` when the listener answered it, else the error's code.
 */
function connectAs(ns: PodNamespace, uid: number, listen: number, host: string, port: number, from?: string): string {
  const script = `
const net = require('node:net');
net.createServer((socket) => socket.end('ok')).listen(${listen}, '0.0.0.0', () => {
  const client = net.connect({ host: ${JSON.stringify(host)}, port: ${port}${from ? `, localAddress: '${from}'` : ''} });
  client.setTimeout(3000, () => { console.log('timeout'); process.exit(1); });
  client.on('data', () => { console.log('captured'); process.exit(0); });
  client.on('error', (error) => { console.log(error.code); process.exit(1); });
});`;
  const argv = ['netns', 'exec', ns.pod, 'setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups'];
  const run = spawnSync('ip', [...argv, process.execPath, '-e', script], { encoding: 'utf8', timeout: 15_000 });
  return run.stdout.trim();
}

/** Kuma's probe, replayed: listen on the inbound port, dial 127.0.0.6 from 127.0.0.1 as uid 5678. */
const kumaProbe = (ns: PodNamespace) => connectAs(ns, proxyUid, inboundPort, '127.0.0.6', 40123, '127.0.0.1');
/** The application's outbound TCP, with the proxy's outbound port listening. */
const application = (ns: PodNamespace) => connectAs(ns, APP_UID, outboundPort, REMOTE, 443);

/**
 * Interlock's validator as the printers print it with the rules check (uid 0, NET_ADMIN, NET_RAW),
 * less the pod's annotations: the golden is kumactl's own rendering, without the admin and probe
 * ports (9901, 9001) kuma-cni excludes for a pod that does not annotate them.
 */
async function interlockWithRulesCheck(ns: PodNamespace) {
  const printed = validatorArgs({ mesh: 'kuma', image: '', rulesCheck: true, reportEvent: false });
  const args = printed.filter(
    (arg, index) => !arg.startsWith('--pod-') && !(printed[index - 1] ?? '').startsWith('--pod-'),
  );
  expect(args).toEqual(['--mesh', 'kuma', '--rules', 'required']);
  return collect(
    ns.spawnInterlock(['validate', '--termination-log', ns.terminationLog, '--family', 'ipv4', ...args], {
      uid: 0,
      caps: true,
    }),
    ns.terminationLog,
  );
}

async function explainDump(ns: PodNamespace) {
  const file = path.join(ns.tmp, 'dump.v4');
  writeFileSync(file, ns.exec('iptables-nft-save'));
  return runExplain(['--mesh=kuma', '--family=ipv4', `--iptables-save=${file}`, '--output=json'], {
    INTERLOCK_DNS_CAPTURE: 'false',
  });
}

describe("Kuma's probe beside Interlock's validator and rules check", () => {
  it('the weakened ruleset lost exactly the two jumps that capture the application', () => {
    expect(golden.split('\n').length - weakened.split('\n').length).toBe(2);
  });

  it("with no rules Kuma's probe fails and the application is not captured, so both can fail", () => {
    const ns = pod();
    expect(kumaProbe(ns)).toBe('ECONNREFUSED');
    expect(application(ns)).toMatch(/^(EHOSTUNREACH|ENETUNREACH|ECONNREFUSED)$/);
  });

  it("Kuma's probe passes the weakened ruleset though the application goes uncaptured; Interlock fails it", async () => {
    const ns = pod();
    ns.applyRulesText(weakened, 'nft');
    expect(kumaProbe(ns)).toBe('captured');
    expect(application(ns)).not.toBe('captured');
    const validator = await interlockWithRulesCheck(ns);
    expect(validator.exitCode, validator.stdout + validator.stderr).toBe(kuma.failureExitCode);
    expect(validator.terminationMessage).toMatch(/^RulesMismatch: /);
    expect(validator.terminationMessage).toContain('`policy ACCEPT of OUTPUT`');
    expect(validator.terminationMessage).toContain('`policy ACCEPT of PREROUTING`');
    const offline = await explainDump(ns);
    expect(offline.exitCode).toBe(kuma.failureExitCode);
    const failed = (JSON.parse(offline.stdout) as { findings: Array<{ expectation: string; message: string }> })
      .findings;
    // The application's outbound and inbound capture, each named by what decided it.
    expect(failed.map((finding) => finding.expectation)).toEqual(
      expect.arrayContaining(['ipv4/outbound/app', 'ipv4/inbound/app']),
    );
    expect(failed.find((finding) => finding.expectation === 'ipv4/outbound/app')?.message).toContain(
      'policy ACCEPT of OUTPUT',
    );
  });

  it('and the whole golden passes all of them', async () => {
    const ns = pod();
    ns.applyRulesText(golden, 'nft');
    expect(kumaProbe(ns)).toBe('captured');
    expect(application(ns)).toBe('captured');
    const validator = await interlockWithRulesCheck(ns);
    expect(validator.exitCode, validator.stdout + validator.stderr).toBe(0);
    expect((await explainDump(ns)).exitCode).toBe(0);
  });
});
