import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, corpusFile, verdictLine, usePods } from '../harness/pod-namespace.js';

const pod = usePods(afterEach);

const LINKERD = readFileSync(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), 'utf8');
const LINKERD_ARGS = ['--mesh', 'linkerd', '--timeout', '6s'];

describe('the primary CNI never ran', () => {
  it('no interface address: PodNetworkMissing, not a timeout', async () => {
    const ns = pod({ addresses: false });
    ns.applyRulesText(LINKERD, 'nft');
    const run = await ns.runInterlock(LINKERD_ARGS);
    expect(run.exitCode).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(/^PodNetworkMissing: .*IPv4: no global address/);
  });

  it('an address but no route: PodNetworkMissing naming the missing route', async () => {
    const ns = pod({ routes: false });
    ns.applyRulesText(LINKERD, 'nft');
    const run = await ns.runInterlock(LINKERD_ARGS);
    expect(run.exitCode).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(/^PodNetworkMissing: .*no route out of the pod/);
  });

  it('--family ipv6 on an IPv4-only pod: PodNetworkMissing naming IPv6', async () => {
    const ns = pod();
    ns.applyRulesText(LINKERD, 'nft');
    const run = await ns.runInterlock([...LINKERD_ARGS, '--family', 'ipv6']);
    expect(run.exitCode).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(/^PodNetworkMissing: .*IPv6: no global address/);
  });
});

describe('the mesh rules are wrong', () => {
  const cases: Array<[string, (rules: string) => string]> = [
    ['outbound REDIRECT to the wrong port', (rules) => rules.replace('--to-ports 4140', '--to-ports 4141')],
    [
      'the jump from OUTPUT into the mesh chain missing',
      (rules) => rules.replace(/^-A OUTPUT .*-j PROXY_INIT_OUTPUT\n/m, ''),
    ],
    [
      'a blanket RETURN first in the mesh chain',
      (rules) => rules.replace(/^(-A PROXY_INIT_OUTPUT )/m, '-A PROXY_INIT_OUTPUT -j RETURN\n$1'),
    ],
  ];
  for (const [name, mutate] of cases) {
    it(`${name}: InterceptionMissing with the mesh exit code`, async () => {
      const mutated = mutate(LINKERD);
      expect(mutated).not.toBe(LINKERD);
      const ns = pod();
      ns.applyRulesText(mutated, 'nft');
      const run = await ns.runInterlock(LINKERD_ARGS);
      expect(run.exitCode).toBe(95);
      expect(verdictLine(run.terminationMessage)).toMatch(
        /^InterceptionMissing: IPv4 connection to (?:192\.0\.2|198\.51\.100|203\.0\.113)\.\d+:20001 was not redirected to port 4140/,
      );
    });
  }

  it('a dual-stack pod whose IPv6 rules are missing fails, naming IPv6', async () => {
    const ns = pod({ ipv6: true });
    ns.applyRulesText(LINKERD, 'nft', 'ipv4');
    const run = await ns.runInterlock(LINKERD_ARGS);
    expect(run.exitCode).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(
      /^InterceptionMissing: IPv6 connection to \[2001:db8:[0-9a-f:]+\]:20001 was not redirected/,
    );
    const checks = run.summary?.checks as Array<{ name: string; status: string }>;
    expect(checks.find((check) => check.name === 'probe-ipv4')?.status).toBe('passed');
    expect(checks.find((check) => check.name === 'probe-ipv6')?.status).toBe('failed');
  });

  it('a dual-stack pod with rules in both families passes both probes', async () => {
    const ns = pod({ ipv6: true });
    ns.applyRulesText(LINKERD, 'nft', 'ipv4');
    ns.applyRulesText(LINKERD, 'legacy', 'ipv6');
    const run = await ns.runInterlock(LINKERD_ARGS);
    expect(run.exitCode, run.stdout).toBe(0);
    const checks = run.summary?.checks as Array<{ name: string; status: string }>;
    expect(checks.filter((check) => check.name.startsWith('probe-')).map((check) => check.status)).toEqual([
      'passed',
      'passed',
    ]);
  });

  it('a different peer answering at the probe address is not mistaken for interception', async () => {
    const ns = pod({ sink: 'drop' });
    // The sink owns the probe address and answers on the probe port, as an uncaptured real host would.
    ns.execSink('ip', 'addr', 'add', '192.0.2.1/32', 'dev', 'lo');
    const stranger = ns.spawnInSink([
      'node',
      '-e',
      "require('net').createServer(s=>{s.on('data',d=>s.write(d));}).listen(20001,'192.0.2.1');setTimeout(()=>process.exit(0),20000)",
    ]);
    try {
      await ns.untilListening('sink', 20001);
      const run = await ns.runInterlock([...LINKERD_ARGS, '--probe-address', '192.0.2.1']);
      expect(run.exitCode).toBe(95);
      expect(verdictLine(run.terminationMessage)).toMatch(
        /^InterceptionMissing: .*a different peer answered \(192\.0\.2\.1:20001 answered with 36 bytes that are not our listener's nonce\)/,
      );
    } finally {
      stranger.kill('SIGKILL');
    }
  });
});

describe('rules that land late', () => {
  for (const sink of ['drop', 'reject'] as const) {
    it(`passes when the rules arrive one second after start (sink ${sink}s the uncaptured probe)`, async () => {
      const ns = pod({ sink });
      const child = ns.spawnInterlock([
        'validate',
        '--termination-log',
        ns.terminationLog,
        '--mesh',
        'linkerd',
        '--timeout',
        '10s',
      ]);
      const running = collect(child, ns.terminationLog);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      ns.applyRulesText(LINKERD, 'nft');
      const run = await running;
      expect(run.exitCode, run.stdout).toBe(0);
      const probe = (run.summary?.checks as Array<{ name: string; message: string }>).find(
        (check) => check.name === 'probe-ipv4',
      );
      // More than one attempt proves the first ones really went uncaptured.
      expect(probe?.message).toMatch(/intercepted into port 4140 \(outbound capture, attempt ([2-9]|\d\d+) of \d+/);
    });
  }
});

describe('identity, ports and signals', () => {
  it("passes Istio's ruleset with the validator running as the proxy uid 1337", async () => {
    const ns = pod();
    ns.applyRules(corpusFile('istio-cni/basic', 'iptables-nft-save.v4.txt'), 'nft');
    const run = await ns.runInterlock(['--mesh', 'istio', '--timeout', '5s'], { uid: 1337 });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(verdictLine(run.terminationMessage)).toMatch(
      /^Intercepted: IPv4 connection to 10\.\d+\.\d+\.2:20001 was intercepted into port 15006 \(proxy-loopback capture/,
    );
  });

  it('as uid 1337 with no Istio rules it fails rather than passing unproven', async () => {
    const ns = pod();
    const run = await ns.runInterlock(['--mesh', 'istio', '--timeout', '4s'], { uid: 1337 });
    expect(run.exitCode).toBe(126);
    expect(verdictLine(run.terminationMessage)).toMatch(/^InterceptionMissing: .*not redirected to port 15006/);
  });

  it("running as Linkerd's proxy uid is a configuration error, never a pass", async () => {
    const ns = pod();
    ns.applyRulesText(LINKERD, 'nft');
    const run = await ns.runInterlock(LINKERD_ARGS, { uid: 2102 });
    expect(run.exitCode).toBe(64);
    expect(verdictLine(run.terminationMessage)).toMatch(/^ProbeIdentityExcluded: the validator runs as uid 2102/);
  });

  it('the redirect port already bound by another process: ProbePortInUse', async () => {
    const ns = pod();
    ns.applyRulesText(LINKERD, 'nft');
    const squatter = ns.spawnInPod([
      'node',
      '-e',
      "require('net').createServer().listen(4140,'0.0.0.0');setTimeout(()=>process.exit(0),20000)",
    ]);
    try {
      await ns.untilListening('pod', 4140);
      const run = await ns.runInterlock(LINKERD_ARGS);
      expect(run.exitCode).toBe(95);
      expect(verdictLine(run.terminationMessage)).toMatch(/^ProbePortInUse: port 4140 \(ipv4\) is already bound/);
    } finally {
      squatter.kill('SIGKILL');
    }
  });

  it('SIGTERM during the probe exits with the failure code and an Interrupted termination message', async () => {
    const ns = pod({ sink: 'drop' });
    const child = ns.spawnInterlock([
      'validate',
      '--termination-log',
      ns.terminationLog,
      '--mesh',
      'linkerd',
      '--timeout',
      '20s',
    ]);
    const running = collect(child, ns.terminationLog);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    child.kill('SIGTERM');
    const run = await running;
    expect(run.exitCode).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(/^Interrupted: SIGTERM ended the validation before a verdict/);
  });

  it('an invalid flag value exits 64 naming the flag and the value', async () => {
    const ns = pod();
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', 'soon']);
    expect(run.exitCode).toBe(64);
    expect(verdictLine(run.terminationMessage)).toMatch(/^ConfigInvalid: --timeout="soon": expected a duration/);
  });
});
