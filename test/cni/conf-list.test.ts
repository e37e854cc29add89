import { describe, expect, it } from 'vitest';
import { confListFromValue, networkNameProblem, wrappedConfFromValue } from '../../src/cni/conf-list.js';
import { decodeNetConf } from '../../src/cni/net-conf.js';

const list = (value: unknown, libcni: '1.1' | '1.3' = '1.1') => confListFromValue(value, libcni);

describe('a plugin configuration as Go decodes it into types.NetConf', () => {
  it('matches field names case-insensitively, and a null leaves the field as it was', () => {
    expect(decodeNetConf({ Type: 'bridge', NAME: 'n', CniVersion: '1.0.0' })).toMatchObject({
      ok: true,
      conf: { type: 'bridge', name: 'n', cniVersion: '1.0.0' },
    });
    expect(decodeNetConf({ type: 'bridge', TYPE: null })).toMatchObject({ ok: true, conf: { type: 'bridge' } });
    expect(decodeNetConf({ type: 'bridge', IPAM: { Type: 'host-local' } })).toMatchObject({
      ok: true,
      conf: { ipamType: 'host-local' },
    });
  });

  it("refuses a missing or empty type, and a value of the wrong JSON type in the struct's fields", () => {
    expect(decodeNetConf({ name: 'x' })).toEqual({ ok: false, error: "missing 'type'" });
    expect(decodeNetConf(null)).toEqual({ ok: false, error: "missing 'type'" });
    expect(decodeNetConf({ type: 5 })).toMatchObject({
      ok: false,
      error: expect.stringContaining('number where a string'),
    });
    expect(decodeNetConf({ type: 'b', ipam: [] })).toMatchObject({ ok: false });
    expect(decodeNetConf({ type: 'b', ipam: { type: 1 } })).toMatchObject({ ok: false });
    expect(decodeNetConf({ type: 'b', capabilities: { portMappings: 'yes' } })).toMatchObject({ ok: false });
    expect(decodeNetConf({ type: 'b', dns: { nameservers: [1] } })).toMatchObject({ ok: false });
    expect(decodeNetConf({ type: 'b', prevResult: 'x' })).toMatchObject({ ok: false });
    expect(decodeNetConf(['bridge'])).toMatchObject({ ok: false, error: expect.stringContaining('array') });
  });

  it('ignores unknown keys of any type', () => {
    expect(decodeNetConf({ type: 'calico', mtu: 0, kubernetes: { kubeconfig: 1 }, policy: [] })).toMatchObject({
      ok: true,
    });
  });
});

describe('libcni ConfListFromBytes (1.1.2, containerd) and NetworkConfFromBytes (1.3.0, CRI-O)', () => {
  const plugins = [{ type: 'bridge' }];
  it('needs a string name; cniVersion, when present, must be a string', () => {
    expect(list({ plugins })).toMatchObject({ ok: false, error: 'no "name"' });
    expect(list({ name: null, plugins })).toMatchObject({ ok: false, error: expect.stringContaining('null') });
    expect(list({ name: 'n', cniVersion: 1, plugins })).toMatchObject({ ok: false });
    expect(list({ name: 'n', plugins })).toMatchObject({ ok: true, value: { cniVersion: '' } });
    expect(list({ name: 'n', cniVersion: null, plugins })).toMatchObject({ ok: false });
  });

  it('the list-level keys are case-sensitive (a map, not a struct)', () => {
    expect(list({ Name: 'n', plugins })).toMatchObject({ ok: false, error: 'no "name"' });
    expect(list({ name: 'n', Plugins: plugins })).toMatchObject({ ok: false });
  });

  it('disableCheck: a boolean for 1.1; 1.3 also takes "true"/"false" strings', () => {
    expect(list({ name: 'n', plugins, disableCheck: 'true' }, '1.1')).toMatchObject({ ok: false });
    expect(list({ name: 'n', plugins, disableCheck: 'TRUE' }, '1.3')).toMatchObject({
      ok: true,
      value: { disableCheck: true },
    });
    expect(list({ name: 'n', plugins, disableCheck: 'yes' }, '1.3')).toMatchObject({ ok: false });
    expect(list({ name: 'n', plugins, disableCheck: true }, '1.1')).toMatchObject({
      ok: true,
      value: { disableCheck: true },
    });
  });

  it('plugins: required by 1.1; 1.3 allows none (then a subdirectory supplies them); never an empty list', () => {
    expect(list({ name: 'n' }, '1.1')).toMatchObject({ ok: false, error: 'no "plugins" key' });
    expect(list({ name: 'n' }, '1.3')).toMatchObject({ ok: true, value: { plugins: [] } });
    expect(list({ name: 'n', loadOnlyInlinedPlugins: true }, '1.3')).toMatchObject({ ok: false });
    expect(list({ name: 'n', plugins: [] }, '1.3')).toMatchObject({ ok: false, error: '"plugins" is empty' });
    expect(list({ name: 'n', plugins: {} })).toMatchObject({ ok: false });
    expect(list({ name: 'n', plugins: [{ type: 'a' }, { name: 'no-type' }] })).toMatchObject({
      ok: false,
      error: "plugin 1: missing 'type'",
    });
  });

  it('1.3 picks the highest of cniVersions it implements (<= 1.1.0); 1.1 ignores the key', () => {
    expect(
      list({ name: 'n', plugins, cniVersion: '0.4.0', cniVersions: ['1.0.0', '1.1.0', '2.0.0'] }, '1.3'),
    ).toMatchObject({ ok: true, value: { cniVersion: '1.1.0' } });
    expect(list({ name: 'n', plugins, cniVersion: '0.4.0', cniVersions: ['1.0.0'] }, '1.1')).toMatchObject({
      ok: true,
      value: { cniVersion: '0.4.0' },
    });
    expect(list({ name: 'n', plugins, cniVersions: ['x'] }, '1.3')).toMatchObject({ ok: false });
  });

  it('a top-level array or string is no list', () => {
    expect(list([1])).toMatchObject({ ok: false, error: expect.stringContaining('array') });
    expect(list(null)).toMatchObject({ ok: false, error: 'no "name"' });
  });
});

describe('ConfListFromConf: a .conf becomes a one-plugin list', () => {
  it("takes the list's name and cniVersion from the plugin, and keeps the whole file as the plugin", () => {
    const wrapped = wrappedConfFromValue({ cniVersion: '0.3.1', name: 'linkerd-cni', type: 'linkerd-cni', extra: 1 });
    expect(wrapped).toMatchObject({
      ok: true,
      value: { name: 'linkerd-cni', cniVersion: '0.3.1', plugins: [{ type: 'linkerd-cni', raw: { extra: 1 } }] },
    });
  });

  it('a conflist saved as .conf has no type: refused', () => {
    expect(wrappedConfFromValue({ name: 'n', cniVersion: '1.0.0', plugins: [{ type: 'bridge' }] })).toEqual({
      ok: false,
      error: "missing 'type'",
    });
  });
});

describe('libcni ValidateNetworkName, run by every ADD', () => {
  it('accepts [a-zA-Z0-9][a-zA-Z0-9_.-]*', () => {
    expect(networkNameProblem('k8s-pod-network')).toBeUndefined();
    expect(networkNameProblem('')).toMatch(/no name/);
    expect(networkNameProblem('-x')).toMatch(/refuses/);
    expect(networkNameProblem('pod net')).toMatch(/refuses/);
  });
});
