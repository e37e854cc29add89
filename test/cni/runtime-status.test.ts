import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { auditCni } from '../../src/cni/audit-cni.js';
import type { CniListing } from '../../src/cni/cni-listing.js';
import { withObservation } from '../../src/cni/observe-runtime.js';
import { runtimeAgreement } from '../../src/cni/runtime-agreement.js';
import { parseRuntimeCniConfig, type RuntimeCniConfig } from '../../src/cni/runtime-cni-config.js';
import { prng } from '../harness/prng.js';
import { inventory, listing } from './listing.js';

// containerd 1.6's verbose Status answers as e2e/cri/runtime-status.test.ts recorded them from the
// machine's real containerd (its temp root shown as <node-root>): the info map and the directory.
interface Captured {
  readonly info: { readonly cniconfig: string; readonly lastCNILoadStatus: string };
  readonly confDir: string;
  readonly files: Readonly<Record<string, string>>;
}
const captured = (name: string): Captured =>
  JSON.parse(
    readFileSync(fileURLToPath(new URL(`../fixtures/cni/cri-status/${name}.json`, import.meta.url)), 'utf8'),
  ) as Captured;
const infoOf = (state: Captured): Map<string, string> => new Map(Object.entries(state.info));
const ROOT = '<node-root>';

function parsed(name: string): RuntimeCniConfig {
  const answer = parseRuntimeCniConfig(infoOf(captured(name)));
  if (!answer.ok) throw new Error(answer.error.message);
  return answer.value;
}

/** The audit's prediction over the captured directory, every plugin present in the runtime's plugin dir. */
function predicted(state: Captured, dir = `${ROOT}/net.d`, binDirs: readonly string[] = [`${ROOT}/cni-bin`]) {
  const files: CniListing = listing({ ...state.files }, dir);
  const verdict = auditCni({
    listing: files,
    runtime: 'containerd',
    meshPlugin: 'linkerd-cni',
    binDirs,
    inventory: inventory(['bridge', 'portmap', 'linkerd-cni']),
  });
  return { verdict, listing: files, binDirs };
}

describe("containerd's verbose Status, parsed", () => {
  it("a loaded conflist: the directories, max_conf_num and the pod network, without go-cni's loopback", () => {
    expect(parsed('conflist-loaded')).toEqual({
      confDir: `${ROOT}/net.d`,
      pluginDirs: [`${ROOT}/cni-bin`],
      maxConfNum: 1,
      lastLoadStatus: 'OK',
      networks: [
        {
          name: 'k8s-pod-network',
          cniVersion: '1.0.0',
          chain: ['bridge', 'portmap', 'linkerd-cni'],
          ifName: 'eth0',
          source: captured('conflist-loaded').files['10-primary.conflist'],
        },
      ],
    });
  });

  it('a failed load: no pod network held, the error kept word for word', () => {
    const held = parsed('load-failed');
    expect(held.networks).toEqual([]);
    expect(held.lastLoadStatus).toMatch(
      /^cni config load failed: failed to load CNI config list file <node-root>\/net\.d\/00-new\.conflist: error parsing configuration list: unexpected end of JSON input/,
    );
    expect(parsed('no-config').lastLoadStatus).toMatch(/^cni config load failed: no network config found in /);
  });

  it("refuses what is not go-cni's shape, naming the part at fault", () => {
    const good = captured('conflist-loaded').info;
    const config = JSON.parse(good.cniconfig) as Record<string, unknown>;
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ lastCNILoadStatus: 'OK' }, /no "cniconfig" entry/],
      [{ cniconfig: good.cniconfig }, /no "lastCNILoadStatus" entry/],
      [{ ...good, cniconfig: good.cniconfig.slice(0, 40) }, /"cniconfig" is not JSON/],
      [{ ...good, cniconfig: '[]' }, /"cniconfig" is not an object/],
      [{ ...good, cniconfig: JSON.stringify({ ...config, PluginDirs: '/opt/cni/bin' }) }, /PluginDirs/],
      [{ ...good, cniconfig: JSON.stringify({ ...config, PluginConfDir: 5 }) }, /PluginConfDir/],
      [{ ...good, cniconfig: JSON.stringify({ ...config, PluginMaxConfNum: 1.5 }) }, /PluginMaxConfNum/],
      [{ ...good, cniconfig: JSON.stringify({ ...config, Networks: {} }) }, /Networks is not a list/],
      [
        {
          ...good,
          cniconfig: JSON.stringify({
            ...config,
            Networks: [{ IFName: 'eth0', Config: { Name: 'n', CNIVersion: '1.0.0', Source: '', Plugins: [{}] } }],
          }),
        },
        /Networks\[0\]: a plugin without/,
      ],
    ];
    const network = (change: Record<string, unknown>) =>
      JSON.stringify({
        PluginDirs: ['/b'],
        PluginConfDir: '/c',
        PluginMaxConfNum: 1,
        Networks: [
          {
            IFName: 'eth0',
            Config: { Name: 'n', CNIVersion: '1.0.0', Source: '{}', Plugins: [{ Network: { type: 'bridge' } }] },
            ...change,
          },
        ],
      });
    const one = (change: Record<string, unknown>) => ({ ...good, cniconfig: network(change) });
    const config1 = (plugins: unknown, rest: Record<string, unknown> = {}) =>
      one({ Config: { Name: 'n', CNIVersion: '1.0.0', Source: '', Plugins: plugins, ...rest } });
    cases.push(
      [
        { ...good, cniconfig: JSON.stringify({ ...config, PluginDirs: ['/opt/cni/bin', 7] }) },
        /PluginDirs is not a list of strings/,
      ],
      [
        { ...good, cniconfig: JSON.stringify({ ...config, PluginMaxConfNum: '1' }) },
        /PluginMaxConfNum is not an integer/,
      ],
      [one({ IFName: 5 }), /Networks\[0\]: IFName is not a string/],
      [one({ Config: [] }), /Networks\[0\]: Config is not an object/],
      [config1([], { Name: 1 }), /Config\.Name, CNIVersion or Source/],
      [config1([], { CNIVersion: null }), /Config\.Name, CNIVersion or Source/],
      [config1([], { Source: {} }), /Config\.Name, CNIVersion or Source/],
      [config1({}), /Config\.Plugins is not a list/],
      [config1([{ Network: { type: 3 } }]), /a plugin without a Network\.type string/],
      [config1([{ Network: 'bridge' }]), /a plugin without a Network\.type string/],
      [{ ...good, cniconfig: JSON.stringify({ ...config, Networks: [7] }) }, /Networks\[0\]: not an object/],
    );
    // go-cni reports no networks as null: nothing held, not refused; its loopback is left out.
    const none = parseRuntimeCniConfig(
      new Map([
        ['cniconfig', JSON.stringify({ ...config, Networks: null })],
        ['lastCNILoadStatus', 'OK'],
      ]),
    );
    expect(none.ok && none.value.networks).toEqual([]);
    const loopbackOnly = parseRuntimeCniConfig(
      new Map([
        ['cniconfig', network({ IFName: 'lo' })],
        ['lastCNILoadStatus', 'OK'],
      ]),
    );
    expect(loopbackOnly.ok && loopbackOnly.value).toEqual({
      confDir: '/c',
      pluginDirs: ['/b'],
      maxConfNum: 1,
      networks: [],
      lastLoadStatus: 'OK',
    });
    for (const [info, message] of cases) {
      const answer = parseRuntimeCniConfig(new Map(Object.entries(info)));
      expect(answer.ok).toBe(false);
      if (!answer.ok) {
        expect(answer.error.reason).toBe('RuntimeAnswerInvalid');
        expect(answer.error.message).toMatch(/^containerd's verbose Status: /);
        expect(answer.error.message).toMatch(message);
      }
    }
  });

  it('fuzz: cut, flipped and retyped answers are refused or parsed, never thrown', () => {
    const random = prng(44);
    const texts = ['conflist-loaded', 'load-failed', 'conf-loaded', 'renamed-in-not-loaded'].map(
      (name) => captured(name).info.cniconfig,
    );
    for (let round = 0; round < 3000; round++) {
      const base = texts[round % texts.length] as string;
      const at = Math.floor(random() * base.length);
      const mutated = [
        base.slice(0, at),
        base.slice(0, at) + String.fromCharCode(Math.floor(random() * 128)) + base.slice(at + 1),
        base.replace(/"[A-Za-z]+":/, `"${String.fromCharCode(65 + Math.floor(random() * 26))}":`),
        base.replace(/\[/, '{"a":['),
      ][round % 4] as string;
      const answer = parseRuntimeCniConfig(
        new Map([
          ['cniconfig', mutated],
          ['lastCNILoadStatus', 'OK'],
        ]),
      );
      if (answer.ok) {
        expect(Array.isArray(answer.value.networks)).toBe(true);
        for (const network of answer.value.networks) expect(network.ifName).not.toBe('lo');
      } else expect(answer.error.reason).toBe('RuntimeAnswerInvalid');
    }
  });
});

describe('the prediction against what containerd holds', () => {
  it('agree: the conflist containerd holds is the file the audit predicts', () => {
    const state = captured('conflist-loaded');
    expect(runtimeAgreement(predicted(state), parsed('conflist-loaded'))).toEqual([]);
  });

  it('agree: a single-plugin .conf, re-encoded by libcni, is found by its name and chain', () => {
    const state = captured('conf-loaded');
    const prediction = predicted(state);
    expect(prediction.verdict.loads?.file).toBe('10-bridge.conf');
    expect(runtimeAgreement(prediction, parsed('conf-loaded'))).toEqual([]);
  });

  it('a file renamed in and never loaded: RuntimeDisagrees names the held file and the predicted one', () => {
    const state = captured('renamed-in-not-loaded');
    const findings = runtimeAgreement(predicted(state), parsed('renamed-in-not-loaded'));
    expect(findings).toEqual([
      {
        code: 'RuntimeDisagrees',
        severity: 'error',
        file: '10-primary.conflist',
        message: expect.stringMatching(
          /^containerd loaded 10-primary\.conflist \(network "k8s-pod-network" \[bridge -> portmap -> linkerd-cni\]\), while the audit predicts 05-new\.conflist: the runtime has not reloaded/,
        ),
      },
    ]);
  });

  it('the held file gone from the directory: named by its network, and no file carries it', () => {
    const state = captured('renamed-in-not-loaded');
    const held = parsed('renamed-in-not-loaded');
    // 10-primary.conflist removed; 05-new.conflist has the same name and chain: only a warning.
    const { ['10-primary.conflist']: _gone, ...rest } = state.files;
    const same = runtimeAgreement(predicted({ ...state, files: rest }), held);
    expect(same).toEqual([
      expect.objectContaining({
        severity: 'warning',
        message: expect.stringMatching(
          /^containerd holds network "k8s-pod-network" .* with a text no file of <node-root>\/net\.d has now; 05-new\.conflist, which the audit predicts, has the same name and chain/,
        ),
      }),
    ]);
    // 05-new.conflist without the mesh plugin: another chain, an error.
    const meshless = rest['05-new.conflist']?.replace(/,\s*\{\s*"type": "linkerd-cni"[^}]*\}/, '') as string;
    const other = runtimeAgreement(predicted({ ...state, files: { '05-new.conflist': meshless } }), held);
    expect(other).toEqual([
      expect.objectContaining({
        severity: 'error',
        message: expect.stringMatching(
          /^containerd holds network "k8s-pod-network" \[bridge -> portmap -> linkerd-cni\], which no file of <node-root>\/net\.d carries now, while the audit predicts 05-new\.conflist/,
        ),
      }),
    ]);
  });

  it('the held conflist rewritten since (same name and chain): a warning, not an error', () => {
    const state = captured('conflist-loaded');
    const edited = state.files['10-primary.conflist']?.replace('10.213.1.0/24', '10.213.99.0/24') as string;
    const findings = runtimeAgreement(
      predicted({ ...state, files: { '10-primary.conflist': edited } }),
      parsed('conflist-loaded'),
    );
    expect(findings).toEqual([
      expect.objectContaining({
        code: 'RuntimeDisagrees',
        severity: 'warning',
        message: expect.stringContaining('10-primary.conflist, which the audit predicts, has the same name and chain'),
      }),
    ]);
    // Rewritten without the mesh plugin: the chain differs, an error.
    const dropped = state.files['10-primary.conflist']?.replace(/,\s*\{\s*"type": "linkerd-cni"[^}]*\}/, '') as string;
    expect(dropped).not.toContain('linkerd-cni');
    const error = runtimeAgreement(
      predicted({ ...state, files: { '10-primary.conflist': dropped } }),
      parsed('conflist-loaded'),
    );
    expect(error).toEqual([expect.objectContaining({ code: 'RuntimeDisagrees', severity: 'error' })]);
  });

  it('another directory or plugin directory than containerd uses: each a disagreement naming both', () => {
    const state = captured('conflist-loaded');
    const dirs = runtimeAgreement(predicted(state, '/etc/cni/net.d'), parsed('conflist-loaded'));
    expect(dirs.map((finding) => finding.message)).toEqual([
      'containerd loads its CNI configuration from <node-root>/net.d, not from /etc/cni/net.d, which this audit read: the prediction is about files the runtime does not use',
    ]);
    // GKE: containerd's plugins are in /home/kubernetes/bin; the default /opt/cni/bin is a guess.
    const gkeState = captured('gke-layout');
    const gke = parsed('gke-layout');
    expect(gke.pluginDirs).toEqual(['/home/kubernetes/bin']);
    const guessed = runtimeAgreement(predicted(gkeState, `${ROOT}/net.d`, ['/opt/cni/bin']), gke);
    expect(guessed.map((finding) => finding.message)).toEqual([
      expect.stringMatching(/^containerd looks for plugin binaries in \/home\/kubernetes\/bin, not in \/opt\/cni\/bin/),
    ]);
    expect(runtimeAgreement(predicted(gkeState, `${ROOT}/net.d`, gke.pluginDirs), gke)).toEqual([]);
  });

  it('a single-plugin file matches only by its own name and plugin type, a conflist never by shape', () => {
    const held = parsed('conf-loaded');
    const conf = captured('conf-loaded').files['10-bridge.conf'] as string;
    const lookalikes = {
      '10-bridge.conf': conf.replace('"solo"', '"alone"'),
      '20-solo.conf': conf.replace('"bridge"', '"portmap"'),
      '30-solo.conflist': JSON.stringify({ cniVersion: '0.4.0', name: 'solo', plugins: [{ type: 'bridge' }] }),
    };
    const state = { ...captured('conf-loaded'), files: lookalikes };
    expect(runtimeAgreement(predicted(state), held)).toEqual([
      expect.objectContaining({
        severity: 'error',
        message: expect.stringMatching(
          /^containerd holds network "solo" \[bridge\], which no file of <node-root>\/net\.d carries now/,
        ),
      }),
    ]);
  });

  it('paths compare without their trailing slashes; a split plugin list is not the same list', () => {
    const state = captured('conflist-loaded');
    const held = parsed('conflist-loaded');
    expect(runtimeAgreement(predicted(state, `${ROOT}/net.d//`, [`${ROOT}/cni-bin/`]), held)).toEqual([]);
    const split = { ...held, pluginDirs: ['/a', '/b'] };
    expect(runtimeAgreement(predicted(state, `${ROOT}/net.d`, ['/a/b']), split)).toEqual([
      expect.objectContaining({ message: expect.stringContaining('plugin binaries in /a, /b, not in /a/b,') }),
    ]);
    const rooted = { ...held, confDir: '/' };
    expect(runtimeAgreement(predicted(state, '///'), rooted).map((finding) => finding.message)).toEqual([]);
  });

  it('containerd holds nothing after a failed load, and the directory is fixed since: both reported', () => {
    const findings = runtimeAgreement(predicted(captured('conflist-loaded')), parsed('no-config'));
    expect(findings).toEqual([
      expect.objectContaining({ code: 'RuntimeLoadFailed', severity: 'error' }),
      {
        code: 'RuntimeDisagrees',
        severity: 'error',
        message:
          'containerd holds no pod network, but the audit predicts it loads 10-primary.conflist: the runtime has not loaded the directory as it is now',
      },
    ]);
    // Nothing predicted and nothing held: no disagreement, only the failed load.
    const empty = runtimeAgreement(predicted({ ...captured('no-config'), files: {} }), parsed('no-config'));
    expect(empty.map((finding) => finding.code)).toEqual(['RuntimeLoadFailed']);
  });

  it("a held network whose name differs from the predicted file's (same chain): an error, not a warning", () => {
    const state = captured('conflist-loaded');
    const renamed = state.files['10-primary.conflist']?.replace('"k8s-pod-network"', '"other-network"') as string;
    const findings = runtimeAgreement(
      predicted({ ...state, files: { '10-primary.conflist': renamed } }),
      parsed('conflist-loaded'),
    );
    expect(findings).toEqual([
      expect.objectContaining({
        severity: 'error',
        message: expect.stringContaining(
          'which no file of <node-root>/net.d carries now, while the audit predicts 10-primary.conflist',
        ),
      }),
    ]);
    // A held network the audit predicts none for (the file sorting first fails to load): an error naming it.
    const broken = runtimeAgreement(
      predicted({ ...state, files: { ...state.files, '00-broken.conflist': '{"cniVersion": 1}' } }),
      parsed('conflist-loaded'),
    );
    expect(broken).toContainEqual(
      expect.objectContaining({
        file: '10-primary.conflist',
        message: expect.stringContaining(
          'containerd loaded 10-primary.conflist (network "k8s-pod-network" [bridge -> portmap -> linkerd-cni]), while the audit predicts it loads no network',
        ),
      }),
    );
  });

  it("a failed last load: RuntimeLoadFailed with containerd's own sentence", () => {
    const state = captured('load-failed');
    const findings = runtimeAgreement(predicted(state), parsed('load-failed'));
    expect(findings).toEqual([
      expect.objectContaining({
        code: 'RuntimeLoadFailed',
        message: expect.stringContaining(
          '(lastCNILoadStatus): "cni config load failed: failed to load CNI config list file <node-root>/net.d/00-new.conflist',
        ),
      }),
    ]);
  });

  it('an unanswered runtime is an error of its own; an agreeing one leaves a healthy verdict healthy', () => {
    const state = captured('conflist-loaded');
    const prediction = predicted(state);
    expect(prediction.verdict.healthy).toBe(true);
    const unanswered = withObservation(prediction, {
      kind: 'unanswered',
      asked: 'named',
      tries: [
        { socket: '/run/containerd/containerd.sock', message: 'CRI Status on the runtime socket: connect ENOENT' },
      ],
    });
    expect(unanswered.healthy).toBe(false);
    expect(unanswered.findings.map((finding) => finding.code)).toEqual(['RuntimeUnobserved']);
    const agreed = withObservation(prediction, {
      kind: 'answered',
      socket: '/run/containerd/containerd.sock',
      status: { runtime: 'containerd', held: parsed('conflist-loaded') },
    });
    expect(agreed).toMatchObject({ healthy: true, observed: { agrees: true, network: { name: 'k8s-pod-network' } } });
  });
});
