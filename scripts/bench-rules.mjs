// Parse + trace time of a synthetic nat table of 1k / 10k / 100k rules, on the built dist/.
// Run after `npm run build`. The target is < 50 ms at 10k and time growing linearly.
import { performance } from 'node:perf_hooks';
import { parseIptablesSave } from '../dist/rules/iptables-save/parse-iptables-save.js';
import { tracePacket } from '../dist/trace/trace.js';
import { parseIp } from '../dist/addr/ip.js';

function synthetic(count) {
  const lines = ['*nat', ':PREROUTING ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':MESH_OUTPUT - [0:0]', '-A OUTPUT -j MESH_OUTPUT'];
  // Rules that do not match the traced packet, so the tracer walks every one of them.
  for (let i = 0; i < count - 2; i++) {
    const a = (i >> 8) & 255;
    const b = i & 255;
    lines.push(`-A MESH_OUTPUT -d 10.${a}.${b}.0/24 -p tcp -m tcp --dport ${1 + (i % 60000)} -m owner ! --uid-owner ${i % 5000} -m comment --comment "rule ${i}" -j RETURN`);
  }
  lines.push('-A MESH_OUTPUT -p tcp -j REDIRECT --to-ports 15001', 'COMMIT', '');
  return lines.join('\n');
}

const packet = {
  family: 'ipv4', hook: 'output', protocol: 'tcp', source: parseIp('192.0.2.77'), destination: parseIp('192.0.2.10'),
  sourcePort: 40000, destinationPort: 80, uid: 1000, gid: 1000, outInterface: 'eth0',
};

function measure(count) {
  const text = synthetic(count);
  const runs = count >= 100_000 ? 3 : 10;
  let best = Infinity;
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    const parsed = parseIptablesSave(text, { backend: 'iptables-nft', family: 'ipv4', source: 'bench' });
    if (!parsed.ok) throw new Error(parsed.error.message);
    const result = tracePacket({ tables: parsed.tables }, packet);
    if (result.outcome.kind !== 'redirect') throw new Error(`unexpected outcome ${result.outcome.kind}`);
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

measure(1000); // warm-up
const figures = [1_000, 10_000, 100_000].map((count) => [count, measure(count)]);
for (const [count, ms] of figures) console.log(`rules parse+trace ${String(count).padStart(7)} rules: ${ms.toFixed(1)} ms (${((ms * 1000) / count).toFixed(2)} µs/rule)`);
const [, t1k] = figures[0];
const [, t10k] = figures[1];
const [, t100k] = figures[2];
console.log(`rules growth: 10k/1k = ${(t10k / t1k).toFixed(1)}x, 100k/10k = ${(t100k / t10k).toFixed(1)}x (linear is 10x)`);
console.log(`rules target: 10k under 50 ms: ${t10k < 50 ? 'met' : 'NOT met'}`);
