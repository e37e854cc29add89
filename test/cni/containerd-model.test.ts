import { describe, expect, it } from 'vitest';
import { containerdLoad } from '../../src/cni/containerd-model.js';
import { conf, conflist, fixture, listing } from './listing.js';

describe('containerd 1.6 (go-cni 1.1.7 loadFromConfDir, max_conf_num 1)', () => {
  it('loads the first counted file by byte order, and reads no other', () => {
    const load = containerdLoad(
      listing({
        '10-calico.conflist': fixture('10-calico.conflist'),
        '99-broken.conflist': '{',
        README: 'x',
        '05-old.conf.bak': '{}',
      }),
    );
    expect(load).toMatchObject({
      ok: true,
      candidates: ['10-calico.conflist', '99-broken.conflist'],
      networks: [{ file: '10-calico.conflist', ifName: 'eth0', list: { name: 'k8s-pod-network' } }],
    });
  });

  it("scenario 2's shape: a standalone .conf that sorts first wins, wrapped into a one-plugin list", () => {
    const load = containerdLoad(
      listing({
        '10-calico-linkerd.conflist': fixture('10-calico-linkerd.conflist'),
        '01-linkerd-cni.conf': fixture('01-linkerd-cni.conf'),
      }),
    );
    expect(load).toMatchObject({
      ok: true,
      networks: [
        {
          file: '01-linkerd-cni.conf',
          wrapped: true,
          list: { name: 'linkerd-cni', cniVersion: '0.3.1', plugins: [{ type: 'linkerd-cni' }] },
        },
      ],
    });
  });

  it('a .json file is a single plugin, like .conf', () => {
    expect(containerdLoad(listing({ '00-x.json': conf('jnet', 'bridge') }))).toMatchObject({
      ok: true,
      networks: [{ file: '00-x.json', wrapped: true }],
    });
    expect(containerdLoad(listing({ '00-x.json': conflist('jnet', ['bridge']) }))).toMatchObject({
      ok: false,
      error: { kind: 'invalid', file: '00-x.json' },
    });
  });

  it('an invalid first file is an error: nothing is skipped, the next file is not used', () => {
    const load = containerdLoad(
      listing({ '00-bad.conflist': '{"name":"x","plugins":[]}', '10-good.conflist': conflist('good', ['bridge']) }),
    );
    expect(load).toMatchObject({
      ok: false,
      error: { kind: 'invalid', file: '00-bad.conflist', message: expect.stringContaining('"plugins" is empty') },
    });
  });

  it('a partial first file is reported as partial, not as invalid', () => {
    const text = conflist('good', ['bridge']);
    expect(containerdLoad(listing({ '00-a.conflist': text.slice(0, 20), '10-b.conflist': text }))).toMatchObject({
      ok: false,
      error: { kind: 'partial', file: '00-a.conflist' },
    });
    expect(containerdLoad(listing({ '00-a.conflist': '', '10-b.conflist': text }))).toMatchObject({
      ok: false,
      error: { kind: 'partial' },
    });
  });

  it('an unreadable first file (a symlink to a directory, a dangling symlink) fails the load', () => {
    expect(
      containerdLoad(listing({ '00-link.conf': { readError: 'EISDIR' }, '10-b.conflist': conflist('b', ['bridge']) })),
    ).toMatchObject({ ok: false, error: { kind: 'unreadable', file: '00-link.conf' } });
  });

  it('a directory with a counted name is passed by', () => {
    expect(
      containerdLoad(listing({ '00-dir.conflist': null, '10-b.conflist': conflist('b', ['bridge']) })),
    ).toMatchObject({ ok: true, networks: [{ file: '10-b.conflist' }] });
  });

  it('no counted file: "no network config found"', () => {
    expect(containerdLoad(listing({ 'calico-kubeconfig': 'x', 'sub.conf': null }))).toMatchObject({
      ok: false,
      error: { kind: 'no-config' },
    });
  });

  it('ties of stem: 10-x.conf sorts before 10-x.conflist and wins', () => {
    expect(
      containerdLoad(listing({ '10-x.conflist': conflist('list', ['bridge']), '10-x.conf': conf('single', 'bridge') })),
    ).toMatchObject({ ok: true, networks: [{ file: '10-x.conf', list: { name: 'single' } }] });
  });

  it('max_conf_num > 1 loads that many in order (eth0, eth1), failing on any invalid one among them', () => {
    const files = { 'a.conflist': conflist('a', ['bridge']), 'b.conf': conf('b', 'macvlan'), 'c.conflist': '{' };
    expect(containerdLoad(listing(files), { maxConfNum: 2 })).toMatchObject({
      ok: true,
      networks: [
        { file: 'a.conflist', ifName: 'eth0' },
        { file: 'b.conf', ifName: 'eth1' },
      ],
    });
    expect(containerdLoad(listing(files), { maxConfNum: 0 })).toMatchObject({
      ok: false,
      error: { file: 'c.conflist' },
    });
  });
});
