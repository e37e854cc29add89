import { describe, expect, it } from 'vitest';
import {
  definitionChain,
  type AttachmentDefinition,
  type DefinitionRead,
} from '../../src/cni/attachment-definition.js';
import type { MultusApiView } from '../../src/cni/multus-api-view.js';
import type { AttachmentPod } from '../../src/cni/attachment-pod.js';
import { podAttachmentFindings } from '../../src/cni/pod-attachment-findings.js';
import { conf, conflist, listing } from './listing.js';

/**
 * A definition's chain as network-attachment-definition-client v1.7.6's GetCNIConfig gives it to
 * Multus: GetCNIConfigFromSpec for a non-empty spec.config, GetCNIConfigFromFile for an empty one.
 */
const MULTUS_DIR = '/etc/cni/multus/net.d';
const definition = (config: string, name = 'istio-cni'): AttachmentDefinition => ({ namespace: 'app', name, config });
const chainOf = (config: string, dir = listing({}, MULTUS_DIR)) =>
  definitionChain(definition(config), dir, '1.1', 'net1');

describe("a definition's spec.config", () => {
  it('a single plugin without a name takes the definition name; a list keeps its own', () => {
    const single = chainOf(JSON.stringify({ cniVersion: '0.3.1', type: 'istio-cni' }));
    expect(single).toMatchObject({
      ok: true,
      network: {
        file: 'NetworkAttachmentDefinition app/istio-cni (spec.config)',
        wrapped: true,
        ifName: 'net1',
        list: { name: 'istio-cni', plugins: [{ type: 'istio-cni' }] },
      },
    });
    const emptyName = chainOf(JSON.stringify({ cniVersion: '0.3.1', name: '', type: 'istio-cni' }));
    expect(emptyName.ok && emptyName.network.list.name).toBe('istio-cni');
    const list = chainOf(conflist('own', ['bridge', 'istio-cni']));
    expect(list).toMatchObject({ ok: true, network: { wrapped: false, list: { name: 'own' } } });
  });

  it('not JSON, not an object, or not a configuration: no chain, and the sentence says which', () => {
    expect(chainOf('{"type":')).toMatchObject({ ok: false, message: expect.stringContaining('does not parse') });
    for (const config of ['[]', 'null', '"istio-cni"', '7'])
      expect(chainOf(config)).toMatchObject({ ok: false, message: expect.stringContaining('is not a JSON object') });
    expect(chainOf(JSON.stringify({ name: 'x', plugins: [] }))).toMatchObject({
      ok: false,
      message: expect.stringContaining('is not a network configuration'),
    });
  });
});

describe("an empty spec.config: the file of the definition's name in Multus's confDir", () => {
  it('the first file, in name order, carrying the network; another name is passed over', () => {
    const dir = listing(
      { 'b-istio.conf': conf('istio-cni', 'istio-cni'), 'a-other.conf': conf('other', 'bridge') },
      MULTUS_DIR,
    );
    expect(chainOf('', dir)).toMatchObject({
      ok: true,
      network: { file: `${MULTUS_DIR}/b-istio.conf`, ifName: 'net1' },
    });
  });

  it('a file that does not load before it stops the lookup, as upstream stops', () => {
    const dir = listing({ 'a-broken.conf': '{"name": 1}', 'b-istio.conf': conf('istio-cni', 'istio-cni') }, MULTUS_DIR);
    expect(chainOf('', dir)).toMatchObject({
      ok: false,
      message: expect.stringContaining('stops at /etc/cni/multus/net.d/a-broken.conf'),
    });
  });

  it('no such file, or no confDir at all', () => {
    expect(chainOf('', listing({ 'a.conf': conf('other', 'bridge') }, MULTUS_DIR))).toMatchObject({
      ok: false,
      message: expect.stringContaining('no file of /etc/cni/multus/net.d carries network "istio-cni"'),
    });
    expect(definitionChain(definition(''), undefined, '1.1', 'net1')).toMatchObject({
      ok: false,
      message: expect.stringContaining('is not on this node'),
    });
  });
});

describe('a pod whose definitions cannot all be read', () => {
  const attachment = {
    file: `${MULTUS_DIR}/istio-cni.conf`,
    list: { name: 'istio-cni', cniVersion: '0.3.1', disableCheck: false, loadOnlyInlinedPlugins: false, plugins: [] },
    wrapped: true,
    ifName: 'net1',
  };
  const pod: AttachmentPod = { namespace: 'app', name: 'web', networks: 'a, b' };
  const judge = (reads: Record<string, 'absent' | 'unreadable'>) =>
    podAttachmentFindings(
      {
        definitions: new Map(
          Object.entries(reads).map(([key, state]) => [
            key,
            state === 'absent' ? { state } : { state, message: 'answered 403' },
          ]),
        ),
        pods: { ok: true, pods: [pod] },
      },
      attachment,
      'istio-cni',
      undefined,
      '1.1',
    ).map((finding) => `${finding.severity}:${finding.code}`);

  it('every one unreadable: a warning; one known missing among them: the error', () => {
    expect(judge({ 'app/a': 'unreadable', 'app/b': 'unreadable' })).toEqual(['warning:AttachmentUnread']);
    expect(judge({ 'app/a': 'unreadable', 'app/b': 'absent' })).toEqual(['error:PodAttachmentMissing']);
    expect(judge({ 'app/a': 'unreadable' })).toEqual(['warning:AttachmentUnread']);
  });

  it('an annotation naming nothing (Multus reads "[]" as no attachment) is a pod without the mesh plugin', () => {
    const findings = podAttachmentFindings(
      { definitions: new Map(), pods: { ok: true, pods: [{ ...pod, networks: '[]' }] } },
      attachment,
      'istio-cni',
      undefined,
      '1.1',
    );
    expect(findings.map((finding) => finding.code)).toEqual(['PodAttachmentMissing']);
    expect(findings[0]?.message).toContain(
      'carries istio-cni (network "istio-cni", /etc/cni/multus/net.d/istio-cni.conf): it names none;',
    );
  });

  it('each sentence names the pod, the annotation and why each definition gives no mesh plugin', () => {
    const messages = (reads: Record<string, DefinitionRead>, pods: MultusApiView['pods'] = { ok: true, pods: [pod] }) =>
      podAttachmentFindings(
        { definitions: new Map(Object.entries(reads)), pods },
        attachment,
        'istio-cni',
        undefined,
        '1.1',
      ).map((finding) => finding.message);
    const annotation = 'meshed pod app/web has k8s.v1.cni.cncf.io/networks: "a, b"';
    expect(messages({ 'app/a': { state: 'unreadable', message: 'answered 403' } })).toEqual([
      `${annotation}, and whether it gives istio-cni is not known: NetworkAttachmentDefinition app/a cannot be read (answered 403); NetworkAttachmentDefinition app/b cannot be read (not read)`,
    ]);
    const broken = { state: 'found', definition: definition('{not json', 'b') } as const;
    const plain = { state: 'found', definition: definition(conflist('a', ['bridge', 'portmap']), 'a') } as const;
    expect(messages({ 'app/a': plain, 'app/b': broken })).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${annotation}, and no attachment it requests carries istio-cni \\(network "istio-cni", ${MULTUS_DIR}/istio-cni.conf\\): NetworkAttachmentDefinition app/a gives NetworkAttachmentDefinition app/a \\(spec.config\\), whose chain \\[bridge, portmap\\] has no istio-cni; NetworkAttachmentDefinition app/b's spec.config does not parse: .*; Multus never runs istio-cni for it: the pod has no mesh rules \\(unmeshed\\)$`,
        ),
      ),
    ]);
    expect(messages({}, { ok: false, message: 'answered 403' })).toEqual([
      "the node's pods cannot be listed (answered 403): whether each meshed pod requests istio-cni's attachment is not known",
    ]);
  });

  it('no pod list asked for (a chained layout): nothing to judge', () => {
    expect(podAttachmentFindings({ definitions: new Map() }, attachment, 'istio-cni', undefined, '1.1')).toEqual([]);
  });
});
