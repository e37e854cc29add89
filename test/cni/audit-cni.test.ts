import { describe, expect, it } from 'vitest';
import { auditCni } from '../../src/cni/audit-cni.js';
import type { CniAuditInput } from '../../src/cni/cni-audit-input.js';
import type { CniListing } from '../../src/cni/cni-listing.js';
import type { PluginInventory } from '../../src/cni/plugin-binary.js';
import { conflist, fixture, inventory, listing } from './listing.js';

const CALICO = ['calico', 'calico-ipam', 'portmap', 'bandwidth', 'linkerd-cni'];
const audit = (dir: CniListing, plugins: PluginInventory = inventory(CALICO), extra: Partial<CniAuditInput> = {}) =>
  auditCni({
    listing: dir,
    runtime: 'containerd',
    meshPlugin: 'linkerd-cni',
    binDirs: ['/opt/cni/bin'],
    inventory: plugins,
    ...extra,
  });
const codes = (verdict: ReturnType<typeof audit>) =>
  verdict.findings.map((finding) => `${finding.severity}:${finding.code}`);

describe('the CNI audit (containerd)', () => {
  it('S1: the mesh plugin chained after the primary, every binary there at the right version: healthy', () => {
    const verdict = audit(
      listing({ '10-calico.conflist': fixture('10-calico-linkerd.conflist'), 'calico-kubeconfig': 'x' }),
    );
    expect(verdict).toMatchObject({
      healthy: true,
      findings: [],
      loads: {
        file: '10-calico.conflist',
        chain: ['calico', 'portmap', 'bandwidth', 'linkerd-cni'],
        cniVersion: '0.3.1',
      },
    });
  });

  it('S2: a standalone mesh .conf that sorts first: names the file, the order, and that pods get no address', () => {
    const verdict = audit(
      listing({
        '10-calico.conflist': fixture('10-calico-linkerd.conflist'),
        '05-linkerd-cni.conf': fixture('01-linkerd-cni.conf'),
      }),
    );
    expect(verdict.healthy).toBe(false);
    expect(verdict.findings).toContainEqual({
      code: 'MeshFirst',
      severity: 'error',
      file: '05-linkerd-cni.conf',
      message:
        'containerd loads 05-linkerd-cni.conf (it sorts before 10-calico.conflist), whose chain [linkerd-cni] starts with the mesh plugin, which has no IPAM: pods on this node get no address',
    });
  });

  it('S3: the winning file has no mesh plugin; the message names where the mesh plugin is instead', () => {
    const verdict = audit(
      listing({
        '10-calico.conflist': fixture('10-calico.conflist'),
        '20-calico-linkerd.conflist': fixture('10-calico-linkerd.conflist'),
      }),
    );
    expect(codes(verdict)).toEqual(['error:MeshMissing']);
    expect(verdict.findings[0]?.message).toContain('has no linkerd-cni: pods on this node start without the mesh');
    expect(verdict.findings[0]?.message).toContain(
      'linkerd-cni is only in 20-calico-linkerd.conflist, which containerd does not load',
    );
  });

  it('S4: a plugin that does not support the cniVersion: named with the versions it supports', () => {
    const dir = listing({ '10-net.conflist': conflist('net', ['bridge', 'old-mesh', 'linkerd-cni'], '1.0.0') });
    const verdict = audit(
      dir,
      inventory(['bridge', 'old-mesh', 'linkerd-cni'], { 'old-mesh': { supportedVersions: ['0.3.0', '0.3.1'] } }),
    );
    expect(codes(verdict)).toEqual(['error:VersionUnsupported']);
    expect(verdict.findings[0]?.message).toBe(
      'containerd loads 10-net.conflist, but plugin "old-mesh" supports CNI versions 0.3.0, 0.3.1, not 1.0.0: every pod\'s ADD fails at "old-mesh" ("incompatible CNI versions") and pods on this node get no sandbox',
    );
  });

  it('S5: a partial or invalid file that sorts first: says so, and that containerd loads nothing', () => {
    const good = fixture('10-calico-linkerd.conflist');
    const partial = audit(listing({ '00-new.conflist': good.slice(0, 100), '10-calico.conflist': good }), undefined, {
      reads: 5,
    });
    expect(partial.findings).toEqual([
      expect.objectContaining({
        code: 'PartialFile',
        severity: 'error',
        file: '00-new.conflist',
        message: expect.stringContaining('still after 5 read(s); containerd reads it first and fails to load it'),
      }),
    ]);
    const invalid = audit(
      listing({ '00-new.conflist': '{"name":"x","plugins":[{"type":"calico"},]}', '10-calico.conflist': good }),
    );
    expect(invalid.findings[0]).toMatchObject({
      code: 'LoadFails',
      message: expect.stringMatching(
        /^containerd reads 00-new.conflist first .* cannot load it: is not JSON .*"cni config load failed"/,
      ),
    });
  });

  it('a chained mesh plugin whose binary is missing or not executable; a VERSION query that did not answer', () => {
    const dir = listing({ '10-calico.conflist': fixture('10-calico-linkerd.conflist') });
    expect(codes(audit(dir, inventory(CALICO.filter((type) => type !== 'linkerd-cni'))))).toEqual([
      'error:PluginMissing',
    ]);
    expect(codes(audit(dir, inventory(CALICO, { bandwidth: { executable: false } })))).toEqual([
      'error:PluginNotExecutable',
    ]);
    expect(
      codes(
        audit(
          dir,
          inventory(CALICO, { calico: { supportedVersions: undefined, versionError: 'no answer within 2000 ms' } }),
        ),
      ),
    ).toEqual(['error:VersionUnknown']);
  });

  it('no cniVersion means 0.1.0, which a plugin must list', () => {
    const dir = listing({
      '10-net.conflist': JSON.stringify({ name: 'net', plugins: [{ type: 'bridge' }, { type: 'linkerd-cni' }] }),
    });
    const verdict = audit(
      dir,
      inventory(['bridge', 'linkerd-cni'], { 'linkerd-cni': { supportedVersions: ['0.3.1', '1.0.0'] } }),
    );
    expect(verdict.findings[0]?.message).toContain('not 0.1.0 (no cniVersion means 0.1.0)');
  });

  it('a network name libcni refuses fails every ADD', () => {
    const verdict = audit(listing({ '10-net.conflist': conflist('pod network', ['calico', 'linkerd-cni']) }));
    expect(codes(verdict)).toEqual(['error:NetworkNameInvalid']);
  });

  it('leftovers: a file that does not win and names a plugin with no binary is a warning, not a failure', () => {
    const verdict = audit(
      listing({
        '10-calico.conflist': fixture('10-calico-linkerd.conflist'),
        '87-podman-bridge.conflist': fixture('87-podman-bridge.conflist'),
      }),
    );
    expect(verdict.healthy).toBe(true);
    expect(verdict.findings).toEqual([
      expect.objectContaining({
        code: 'Leftover',
        severity: 'warning',
        file: '87-podman-bridge.conflist',
        message: expect.stringContaining('"bridge", "firewall", "tuning"'),
      }),
    ]);
  });

  it('a partial file that sorts after the winner is a warning: containerd never reads it', () => {
    const good = fixture('10-calico-linkerd.conflist');
    const verdict = audit(listing({ '10-calico.conflist': good, '99-new.conflist': good.slice(0, 50) }));
    expect(verdict.healthy).toBe(true);
    expect(codes(verdict)).toEqual(['warning:PartialFile']);
  });

  it('an empty directory', () => {
    expect(audit(listing({}))).toMatchObject({ healthy: false, findings: [{ code: 'NoConfig' }] });
  });
});

describe('the CNI audit (CRI-O)', () => {
  const crio = (dir: CniListing, plugins: PluginInventory = inventory(CALICO)) =>
    audit(dir, plugins, { runtime: 'crio' });

  it('CRI-O skips an invalid first file with a warning and audits the file it does use', () => {
    const verdict = crio(
      listing({
        '00-bad.conflist': '{"name":"x","plugins":[]}',
        '10-calico.conflist': fixture('10-calico-linkerd.conflist'),
      }),
    );
    expect(verdict).toMatchObject({ healthy: true, loads: { file: '10-calico.conflist' } });
    expect(codes(verdict)).toEqual(['warning:PassedOver']);
    expect(verdict.findings[0]?.message).toContain(
      'CRI-O skips 00-bad.conflist (it logs the error and goes on to the next file)',
    );
  });

  it('a partial file sorting before the one CRI-O uses: the answer is not settled', () => {
    const good = fixture('10-calico-linkerd.conflist');
    const verdict = crio(listing({ '00-new.conflist': good.slice(0, 80), '10-calico.conflist': good }));
    expect(verdict.healthy).toBe(false);
    expect(verdict.findings[0]).toMatchObject({
      code: 'PartialFile',
      severity: 'error',
      message: expect.stringContaining('loads it instead once it is complete'),
    });
  });

  it('S4 under CRI-O: the file is skipped at validation, so the next one (without the mesh) wins', () => {
    const dir = listing({
      '10-net.conflist': conflist('net', ['calico', 'old-mesh', 'linkerd-cni']),
      '20-calico.conflist': fixture('10-calico.conflist'),
    });
    const verdict = crio(dir, inventory([...CALICO, 'old-mesh'], { 'old-mesh': { supportedVersions: ['0.3.1'] } }));
    expect(verdict.loads?.file).toBe('20-calico.conflist');
    expect(codes(verdict)).toEqual(['error:MeshMissing', 'warning:PassedOver']);
  });
});
