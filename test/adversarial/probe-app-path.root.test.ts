import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { verdictLine, REPO_ROOT, usePods } from '../harness/pod-namespace.js';

// Istio's rules give two outbound paths by owner: uid 1337's loopback traffic to the pod's address
// goes to the inbound port (and its other traffic RETURNs), everyone else's goes to the outbound
// port. A probe proves only the path of the identity that made its socket. Each ruleset below is
// Istio's own rendered golden (tools/istio-iptables testdata, see test/fixtures/corpus/manifest.json)
// with one of the two paths removed; the probe must not pass where it could have tried that path.
const pod = usePods(afterEach);

const GOLDEN = readFileSync(resolve(REPO_ROOT, 'test/fixtures/corpus/istio/kube-virt-interfaces/restore.v4'), 'utf8');
const APP_PATH_RULE = '-A ISTIO_OUTPUT -j ISTIO_REDIRECT\n';
const PROXY_PATH_RULE = /^-A ISTIO_OUTPUT -o lo ! -d 127\.0\.0\.1\/32 .* -j ISTIO_IN_REDIRECT\n/gm;
const onlyProxyPath = (): string => {
  expect(GOLDEN).toContain(APP_PATH_RULE);
  return GOLDEN.replace(APP_PATH_RULE, '');
};
const onlyAppPath = (): string => {
  expect(GOLDEN.match(PROXY_PATH_RULE)).toHaveLength(2);
  return GOLDEN.replace(PROXY_PATH_RULE, '');
};

const ARGS = ['--mesh', 'istio', '--rules', 'off', '--timeout', '4s'];
const SWITCH = ['setuid', 'setgid'];
const ISTIO_FAILURE = 126;

describe('Istio as uid 1337 (its injected identity)', () => {
  it('rules that redirect only uid 1337 (no app path): with CAP_SETUID/SETGID the app path is probed and fails', async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(onlyProxyPath(), 'nft');
    const run = await ns.runInterlock(ARGS, { uid: 1337, extraCaps: SWITCH });
    expect(run.exitCode, run.terminationMessage).toBe(ISTIO_FAILURE);
    expect(verdictLine(run.terminationMessage)).toMatch(
      /^InterceptionMissing: IPv4 connection to (192\.0\.2|198\.51\.100|203\.0\.113)\.\d+:\d+ was not redirected to port 15001/,
    );
    expect(run.terminationMessage).toMatch(/outbound capture, as uid 65534 gid 65534/);
  });

  it("Istio's whole golden: both paths proven, the app's as uid 65534 from a child process", async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(GOLDEN, 'nft');
    const run = await ns.runInterlock(ARGS, { uid: 1337, extraCaps: SWITCH });
    expect(run.exitCode, run.terminationMessage).toBe(0);
    expect(run.terminationMessage).toMatch(/into port 15006 \(proxy-loopback capture/);
    expect(run.terminationMessage).toMatch(/\(outbound capture, as uid 65534 gid 65534\)/);
    expect(run.terminationMessage).not.toMatch(/not probed/);
  });

  it('spread over several ports, the child connections (one at a time) each prove their port', async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(GOLDEN, 'nft');
    const run = await ns.runInterlock([...ARGS, '--exclude-outbound-ports', '15020'], { uid: 1337, extraCaps: SWITCH });
    expect(run.exitCode, run.terminationMessage).toBe(0);
    const childPorts = [...run.terminationMessage.matchAll(/(\d+) \(outbound capture, as uid 65534 gid 65534\)/g)];
    expect(childPorts.length).toBeGreaterThanOrEqual(3);
  });

  it('without CAP_SETUID/SETGID: passes on the proxy path it proved and says the app path was not probed', async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(onlyProxyPath(), 'nft');
    const run = await ns.runInterlock(ARGS, { uid: 1337 });
    expect(run.exitCode, run.terminationMessage).toBe(0);
    expect(verdictLine(run.terminationMessage)).toMatch(/proxy-loopback capture/);
    expect(run.terminationMessage).toMatch(
      /the application's outbound capture \(any uid but the proxy's\) was not probed: the validator runs as uid 1337 without CAP_SETUID and CAP_SETGID/,
    );
    expect(run.terminationMessage).not.toMatch(/\(outbound capture/);
    expect(run.stdout).toMatch(/"notes":\[[^\]]*was not probed/);
  });
});

describe('Istio as another uid (uid 0, as --rules-check pods run)', () => {
  it('rules that redirect only the app (no uid 1337 loopback path): with CAP_SETUID/SETGID it fails', async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(onlyAppPath(), 'nft');
    const run = await ns.runInterlock(ARGS, { uid: 0, extraCaps: SWITCH });
    expect(run.exitCode, run.terminationMessage).toBe(ISTIO_FAILURE);
    expect(run.terminationMessage).toMatch(
      /proxy-loopback capture of the proxy uid's own traffic, as uid 1337 gid 1337/,
    );
  });

  it('without CAP_SETUID/SETGID: passes on the app path and says the proxy-loopback path was not probed', async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(onlyAppPath(), 'nft');
    const run = await ns.runInterlock(ARGS, { uid: 0 });
    expect(run.exitCode, run.terminationMessage).toBe(0);
    expect(verdictLine(run.terminationMessage)).toMatch(/\(outbound capture,/);
    expect(run.terminationMessage).toMatch(/the proxy-loopback capture .* was not probed: the validator runs as uid 0/);
  });
});
