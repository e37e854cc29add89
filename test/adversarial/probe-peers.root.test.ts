import { afterEach, describe, expect, it } from 'vitest';
import { collect, verdictLine, usePods, type PodNamespace } from '../harness/pod-namespace.js';

// Attackers at the probe's far end, in a pod with no mesh rules at all: none of them may pass.
const pod = usePods(afterEach);
// The strangers listen on the documentation addresses below, so the probe is pinned to them.
const LINKERD_ARGS = ['--mesh', 'linkerd', '--timeout', '5s', '--probe-address', '192.0.2.1,2001:db8::1'];

/** A helper node process in the sink, bounded in time so nothing outlives the test. */
function sinkProcess(ns: PodNamespace, script: string): { stop: () => void } {
  const child = ns.spawnInSink(['node', '-e', `${script};setTimeout(()=>process.exit(0),15000)`]);
  return {
    stop: () => {
      child.kill('SIGKILL');
    },
  };
}

async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 400));
}

describe('a peer at the probe address instead of interception', () => {
  it("an echo peer fails the probe: it cannot produce our listener's nonce", async () => {
    const ns = pod({ sink: 'drop' });
    ns.execSink('ip', 'addr', 'add', '192.0.2.1/32', 'dev', 'lo');
    const peer = sinkProcess(
      ns,
      "require('net').createServer(s=>{s.on('error',()=>{});s.on('data',d=>s.write(d));}).listen(20001,'192.0.2.1')",
    );
    try {
      await ns.untilListening('sink', 20001);
      const run = await ns.runInterlock(LINKERD_ARGS);
      expect(run.exitCode, run.stdout).toBe(95);
      expect(verdictLine(run.terminationMessage)).toMatch(
        /^InterceptionMissing: IPv4 connection to 192\.0\.2\.1:20001 was not redirected.*different peer/,
      );
    } finally {
      peer.stop();
    }
  });

  it('a stranger that answers 36 bytes of its own fails the probe', async () => {
    const ns = pod({ sink: 'drop' });
    ns.execSink('ip', 'addr', 'add', '192.0.2.1/32', 'dev', 'lo');
    const peer = sinkProcess(
      ns,
      "require('net').createServer(s=>{s.on('error',()=>{});s.end(Buffer.concat([Buffer.from('ILK1'),Buffer.alloc(32,7)]));}).listen(20001,'192.0.2.1')",
    );
    try {
      await ns.untilListening('sink', 20001);
      const run = await ns.runInterlock(LINKERD_ARGS);
      expect(run.exitCode, run.stdout).toBe(95);
      expect(verdictLine(run.terminationMessage)).toMatch(/^InterceptionMissing: .*different peer/);
    } finally {
      peer.stop();
    }
  });

  it("a RELAY that connects back to the pod's listener and copies both ways fails the probe, naming the stranger", async () => {
    const ns = pod({ sink: 'drop' });
    ns.execSink('ip', 'addr', 'add', '192.0.2.1/32', 'dev', 'lo');
    // Each connection to the probe address is relayed to the pod's IP on the listener port 4140:
    // the nonces cross intact, so only the arrival's 4-tuple can tell it from interception.
    const relay = sinkProcess(
      ns,
      [
        "const net=require('net')",
        `net.createServer(a=>{const b=net.connect(4140,'${ns.ipv4Address}');a.on('error',()=>b.destroy());b.on('error',()=>a.destroy());a.pipe(b);b.pipe(a);}).listen(20001,'192.0.2.1')`,
      ].join(';'),
    );
    try {
      await ns.untilListening('sink', 20001);
      const run = await ns.runInterlock(LINKERD_ARGS);
      expect(run.exitCode, run.stdout).toBe(95);
      expect(verdictLine(run.terminationMessage)).toMatch(
        /^InterceptionMissing: IPv4 connection to 192\.0\.2\.1:20001 was not redirected to port 4140: .*arrived at the listener from 10\.\d+\.\d+\.1:\d+, not from the probe socket/,
      );
    } finally {
      relay.stop();
    }
  });

  it("an IPv6 relay back to the pod's listener fails the IPv6 probe", async () => {
    const ns = pod({ sink: 'drop', ipv6: true });
    ns.execSink('ip', 'addr', 'add', '2001:db8::1/128', 'dev', 'lo', 'nodad');
    const relay = sinkProcess(
      ns,
      [
        "const net=require('net')",
        `net.createServer(a=>{const b=net.connect(4140,'${ns.ipv6Address}');a.on('error',()=>b.destroy());b.on('error',()=>a.destroy());a.pipe(b);b.pipe(a);}).listen(20001,'2001:db8::1')`,
      ].join(';'),
    );
    try {
      await ns.untilListening('sink', 20001);
      const run = await ns.runInterlock([...LINKERD_ARGS, '--family', 'ipv6']);
      expect(run.exitCode, run.stdout).toBe(95);
      expect(verdictLine(run.terminationMessage)).toMatch(
        /^InterceptionMissing: IPv6 connection to \[2001:db8:[0-9a-f:]+\]:20001 was not redirected to port 4140: .*arrived at the listener from \[fd00:[0-9a-f:]+::1\]:\d+, not from the probe socket/,
      );
    } finally {
      relay.stop();
    }
  });

  it('a stranger connecting to the listener port while the probe runs fails it, even when the rules are right', async () => {
    const ns = pod({ sink: 'drop' });
    // The rules land one second late, so the listener is up for a second; a foreign connection at
    // it meanwhile is evidence that something other than our probe reaches it.
    const stranger = sinkProcess(
      ns,
      `const net=require('net');setInterval(()=>{const s=net.connect(4140,'${ns.ipv4Address}');s.on('error',()=>{});s.on('connect',()=>s.end('hello'));},20)`,
    );
    try {
      await settle();
      const running = collect(
        ns.spawnInterlock(['validate', '--termination-log', ns.terminationLog, ...LINKERD_ARGS, '--rules', 'off']),
        ns.terminationLog,
      );
      await new Promise((resolve) => setTimeout(resolve, 1000));
      ns.applyRulesText(
        '*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp -d 192.0.2.0/24 -j REDIRECT --to-ports 4140\nCOMMIT\n',
        'nft',
      );
      const run = await running;
      expect(run.exitCode, run.stdout).toBe(95);
      expect(verdictLine(run.terminationMessage)).toMatch(
        /^InterceptionMissing: .*a connection from 10\.\d+\.\d+\.1:\d+ that is not our probe arrived at the listener port 4140/,
      );
    } finally {
      stranger.stop();
    }
  });

  it('inbound traffic captured into the inbound port while uid 1337 probes the proxy-loopback path is not a stranger', async () => {
    const ns = pod({ sink: 'drop' });
    // Inbound capture first, the proxy-loopback rule one second later: for that second, inbound
    // connections from the sink reach the validator's listener on 15006, as they do in a meshed pod.
    ns.applyRulesText(
      '*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -p tcp -j REDIRECT --to-ports 15006\nCOMMIT\n',
      'nft',
    );
    const inbound = sinkProcess(
      ns,
      `const net=require('net');setInterval(()=>{const s=net.connect(8080,'${ns.ipv4Address}');s.on('error',()=>{});s.on('connect',()=>s.end('GET / HTTP/1.0\\r\\n\\r\\n'));},20)`,
    );
    try {
      await settle();
      const running = collect(
        ns.spawnInterlock(
          ['validate', '--termination-log', ns.terminationLog, '--mesh', 'istio', '--timeout', '8s', '--rules', 'off'],
          { uid: 1337 },
        ),
        ns.terminationLog,
      );
      await new Promise((resolve) => setTimeout(resolve, 1000));
      ns.exec(
        'iptables-nft',
        '-t',
        'nat',
        '-A',
        'OUTPUT',
        '-o',
        'lo',
        '!',
        '-d',
        '127.0.0.1/32',
        '-p',
        'tcp',
        '-m',
        'owner',
        '--uid-owner',
        '1337',
        '-j',
        'REDIRECT',
        '--to-ports',
        '15006',
      );
      const run = await running;
      expect(run.exitCode, run.stdout).toBe(0);
      expect(run.logs.some((line) => String(line.msg).includes('ignored on the proxy-loopback path'))).toBe(true);
    } finally {
      inbound.stop();
    }
  });
});
