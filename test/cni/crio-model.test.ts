import { describe, expect, it } from 'vitest';
import type { CniEntry } from '../../src/cni/cni-listing.js';
import { crioLoad } from '../../src/cni/crio-model.js';
import { conf, conflist, inventory, listing } from './listing.js';

const binDirs = ['/opt/cni/bin'];

describe('CRI-O (ocicni loadNetworks over libcni 1.3.0)', () => {
  it('skips a file it cannot load and takes the next', () => {
    const load = crioLoad(
      listing({ '00-bad.conflist': '{"name":', '10-good.conflist': conflist('good', ['bridge']) }),
      inventory(['bridge']),
      { binDirs },
    );
    expect(load).toMatchObject({
      ok: true,
      networks: [{ file: '10-good.conflist' }],
      passedOver: [{ file: '00-bad.conflist', problem: 'partial' }],
    });
  });

  it('skips a file whose plugins fail validation: a missing binary, an unsupported cniVersion', () => {
    const files = {
      '00-a.conflist': conflist('a', ['bridge', 'gone']),
      '05-b.conflist': conflist('b', ['bridge', 'old']),
      '10-c.conflist': conflist('c', ['bridge']),
    };
    const load = crioLoad(listing(files), inventory(['bridge', 'old'], { old: { supportedVersions: ['0.3.1'] } }), {
      binDirs,
    });
    expect(load).toMatchObject({
      ok: true,
      networks: [{ file: '10-c.conflist' }],
      passedOver: [
        { file: '00-a.conflist', problem: 'plugins-unusable' },
        { file: '05-b.conflist', problem: 'plugins-unusable', message: expect.stringContaining('0.3.1, not 1.0.0') },
      ],
    });
  });

  it('names a nameless list after its file, and the first file of a name wins it', () => {
    const load = crioLoad(
      listing({
        '10-a.conflist': conflist('', ['bridge']),
        '20-b.conflist': conflist('same', ['bridge']),
        '30-c.conflist': conflist('same', ['bridge']),
      }),
      inventory(['bridge']),
      { binDirs },
    );
    expect(load).toMatchObject({
      ok: true,
      networks: [{ file: '10-a.conflist', list: { name: '10-a.conflist' } }],
      passedOver: [{ file: '30-c.conflist', problem: 'duplicate-name' }],
    });
  });

  it('cni_default_network pins the network by name, whatever sorts first', () => {
    const files = { '10-a.conflist': conflist('a', ['bridge']), '20-b.conf': conf('b', 'bridge') };
    expect(crioLoad(listing(files), inventory(['bridge']), { binDirs, defaultNetwork: 'b' })).toMatchObject({
      ok: true,
      networks: [{ file: '20-b.conf', wrapped: true }],
    });
    expect(crioLoad(listing(files), inventory(['bridge']), { binDirs, defaultNetwork: 'zz' })).toMatchObject({
      ok: false,
      error: { kind: 'default-missing' },
    });
  });

  it('a conflist without "plugins" takes them from <dir>/<name>/*.conf; with none it is skipped', () => {
    const sub: CniEntry[] = [
      { name: '20-portmap.conf', kind: 'file', text: conf('', 'portmap') },
      { name: '10-bridge.conf', kind: 'file', text: conf('', 'bridge') },
    ];
    const base = listing({
      '10-net.conflist': JSON.stringify({ cniVersion: '1.0.0', name: 'net' }),
      '20-next.conflist': conflist('next', ['bridge']),
    });
    const withSub = crioLoad({ ...base, subdirectories: { net: sub } }, inventory(['bridge', 'portmap']), { binDirs });
    expect(withSub).toMatchObject({
      ok: true,
      networks: [{ file: '10-net.conflist', list: { plugins: [{ type: 'bridge' }, { type: 'portmap' }] } }],
    });
    expect(crioLoad(base, inventory(['bridge']), { binDirs })).toMatchObject({
      ok: true,
      networks: [{ file: '20-next.conflist' }],
      passedOver: [{ file: '10-net.conflist', problem: 'no-plugins' }],
    });
  });

  it('nothing usable: "no usable CNI configuration"', () => {
    expect(crioLoad(listing({ 'a.conflist': '[]' }), inventory([]), { binDirs })).toMatchObject({
      ok: false,
      error: { kind: 'no-valid-network' },
    });
  });

  it('differs from containerd on the same directory: containerd fails on the invalid first file, CRI-O uses the second', () => {
    // (the containerd side of this is in containerd-model.test.ts)
    const load = crioLoad(
      listing({ '00-bad.conflist': '{"name":"x","plugins":[]}', '10-good.conflist': conflist('good', ['bridge']) }),
      inventory(['bridge']),
      { binDirs },
    );
    expect(load).toMatchObject({ ok: true, networks: [{ file: '10-good.conflist' }] });
  });
});
