import { afterEach, describe, expect, it } from 'vitest';
import { AMBIENT_TAGS, applyAmbientRules, startZtunnel } from '../harness/ambient-rules.js';
import { usePods } from '../harness/pod-namespace.js';

const pod = usePods(afterEach);

// The goldens load into the kernel as they are, in every pinned tag and backend: what the
// scenarios write is what istio-cni writes.
describe('ambient goldens in a pod namespace', () => {
  for (const tag of AMBIENT_TAGS) {
    for (const backend of ['iptables-nft', 'iptables-legacy'] as const) {
      it(`${tag} default_ipv6 (${backend}): the outbound redirect to 15001 is in both families`, () => {
        const ns = pod({ ipv6: true });
        applyAmbientRules(ns, { tag, backend, families: ['ipv4', 'ipv6'] });
        const save = (tool: string): string =>
          ns.exec(`${tool}-${backend === 'iptables-nft' ? 'nft' : 'legacy'}-save`, '-t', 'nat');
        expect(save('iptables')).toMatch(/-A ISTIO_OUTPUT .*-j REDIRECT --to-ports 15001/);
        expect(save('ip6tables')).toMatch(/-A ISTIO_OUTPUT .*-j REDIRECT --to-ports 15001/);
        expect(ns.exec('ip', '-4', 'rule')).toMatch(/fwmark 0x111\/0xfff lookup 100/);
      });
    }
    if (Number(tag.split('.')[1]) >= 28 || tag.startsWith('HEAD')) {
      it(`${tag} nftables default_ipv6: the inet nat table redirects to 15001`, () => {
        const ns = pod({ ipv6: true });
        applyAmbientRules(ns, { tag, backend: 'nft', families: ['ipv4', 'ipv6'] });
        expect(ns.exec('nft', 'list', 'table', 'inet', 'istio-ambient-nat')).toMatch(/redirect to :15001/);
      });
    }
  }

  it('the ztunnel stand-in listens on [::] with mark 0x539', async () => {
    const ns = pod();
    const child = await startZtunnel(ns);
    try {
      const listening = ns.exec('ss', '-Hltne');
      for (const port of [15001, 15006, 15008, 15053])
        expect(listening).toMatch(new RegExp(`\\*:${port}\\b.*fwmark:0x539.*v6only:0`));
    } finally {
      child.kill();
    }
  });
});
