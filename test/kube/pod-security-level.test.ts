import { describe, expect, it } from 'vitest';
import { meshPods } from '../../scripts/mesh-pods.mjs';
import { validatorContainer } from '../../src/inject/validator-container.js';
import { BASELINE_CHECKS } from '../../src/kube/pod-security-baseline.js';
import type { JudgedPod } from '../../src/kube/pod-security-fields.js';
import { podSecurityLevel } from '../../src/kube/pod-security-level.js';
import { RESTRICTED_CHECKS } from '../../src/kube/pod-security-restricted.js';
import { MESHES } from '../../src/mesh/meshes.js';
import { agentPod, context, MUTATIONS, webhookContainer, webhookPod, type Pod } from './pod-security-corpus.js';

/**
 * The Pod Security Standards evaluator (k8s.io/pod-security-admission v0.33.13's policy package)
 * on real pods: the ones Interlock prints and the ones the meshes render (test/fixtures/meshes),
 * then every check broken one field at a time on a pod that meets restricted.
 */
const validatorOnly = (container: unknown): JudgedPod => ({ spec: { initContainers: [container] } });

describe("Interlock's own pods", () => {
  it('the node agent needs privileged for its host network, on every mesh and in the re-check variant', () => {
    for (const mesh of MESHES)
      expect(podSecurityLevel(agentPod({ image: 'i', mesh })), mesh).toEqual({
        level: 'privileged',
        violations: {
          baseline: { check: 'hostNamespaces', sentence: 'pod: hostNetwork true' },
          restricted: { check: 'hostNamespaces', sentence: 'pod: hostNetwork true' },
        },
      });
    const recheck = agentPod({
      image: 'i',
      mesh: 'linkerd',
      recheck: { socketPath: '/run/c.sock', netnsDir: '/run/netns' },
    });
    recheck.spec.hostNetwork = false;
    expect(podSecurityLevel(recheck).violations.baseline).toEqual({
      check: 'capabilities_baseline',
      sentence: 'container node-agent: securityContext.capabilities.add SYS_ADMIN',
    });
  });

  it("the webhook meets restricted, as its Namespace's label says", () => {
    expect(podSecurityLevel(webhookPod())).toEqual({ level: 'restricted', violations: {} });
  });

  it("every mesh's validator meets restricted; with the rules check (NET_ADMIN) only privileged admits it", () => {
    for (const mesh of MESHES) {
      const plain = validatorContainer({ mesh, image: 'i', rulesCheck: false, reportEvent: false });
      expect(podSecurityLevel(validatorOnly(plain)).level, mesh).toBe('restricted');
      const rules = validatorContainer({ mesh, image: 'i', rulesCheck: true, reportEvent: false });
      expect(podSecurityLevel(validatorOnly(rules)).violations.baseline, mesh).toEqual({
        check: 'capabilities_baseline',
        sentence: `container ${String(rules.name)}: securityContext.capabilities.add NET_ADMIN`,
      });
    }
  });
});

describe("the meshes' rendered pods (test/fixtures/meshes)", () => {
  const pods = meshPods();
  const validatorOf = (pod: (typeof pods)[number]) =>
    ((pod.pod as Pod).spec.initContainers as { name: string }[]).find((container) => container.name === pod.validator);

  it("Linkerd's linkerd-network-validator meets restricted in every version", () => {
    const linkerd = pods.filter((pod) => pod.validator === 'linkerd-network-validator');
    expect(linkerd.length).toBeGreaterThan(4);
    for (const pod of linkerd)
      expect(podSecurityLevel(validatorOnly(validatorOf(pod))).level, pod.id).toBe('restricted');
  });

  it("Istio's istio-validation meets baseline only: it sets no seccompProfile", () => {
    const istio = pods.filter((pod) => pod.validator === 'istio-validation');
    expect(istio.length).toBeGreaterThan(4);
    for (const pod of istio)
      expect(podSecurityLevel(validatorOnly(validatorOf(pod))), pod.id).toEqual({
        level: 'baseline',
        violations: {
          restricted: {
            check: 'seccompProfile_restricted',
            sentence: 'container istio-validation: securityContext.seccompProfile.type unset, and not set on the pod',
          },
        },
      });
  });

  it("Istio's pods without its CNI (istio-init) and in TPROXY mode (istio-proxy) add NET_ADMIN: privileged", () => {
    const pick = (id: string) => pods.find((pod) => pod.id === id)!.pod as Pod;
    expect(podSecurityLevel(pick('istio/1.20.0/hello-tproxy.yaml.injected#0')).violations.baseline).toEqual({
      check: 'capabilities_baseline',
      sentence: 'container istio-init: securityContext.capabilities.add NET_ADMIN',
    });
    expect(podSecurityLevel(pick('istio/1.29.0/hello-openshift-tproxy.yaml.injected#0')).violations.baseline).toEqual({
      check: 'capabilities_baseline',
      sentence: 'container istio-proxy: securityContext.capabilities.add NET_ADMIN',
    });
  });
});

describe('each check fails when its field is broken', () => {
  it('covers every check of both levels', () => {
    const ids = [...BASELINE_CHECKS, ...RESTRICTED_CHECKS].map((check) => check.id);
    expect(MUTATIONS.map((mutation) => mutation.check).sort()).toEqual([...ids].sort());
  });

  it.each(MUTATIONS)('$check: drops the level to $to', ({ check, to, sentence, change }) => {
    const pod = webhookPod();
    change(pod);
    const verdict = podSecurityLevel(pod);
    expect(verdict.level).toBe(to);
    expect(verdict.violations[to === 'privileged' ? 'baseline' : 'restricted']).toEqual({ check, sentence });
  });
});

describe('as upstream reads the fields', () => {
  const judged = (change: (pod: Pod) => void) => {
    const pod = webhookPod();
    change(pod);
    return podSecurityLevel(pod);
  };

  it('lets the pod-level runAsNonRoot and seccompProfile stand in for unset containers, never over a false pod', () => {
    const inherit = judged((pod) => {
      delete context(pod).runAsNonRoot;
      delete context(pod).seccompProfile;
      pod.spec.securityContext = {
        runAsNonRoot: true,
        seccompProfile: { type: 'Localhost', localhostProfile: 'p.json' },
      };
    });
    expect(inherit.level).toBe('restricted');
    expect(judged((pod) => void (pod.spec.securityContext = { runAsNonRoot: false })).violations.restricted).toEqual({
      check: 'runAsNonRoot',
      sentence: 'pod: securityContext.runAsNonRoot false',
    });
    expect(judged((pod) => void (pod.spec.securityContext = { runAsUser: 0 })).violations.restricted?.check).toBe(
      'runAsUser',
    );
  });

  it('judges init and ephemeral containers as app containers', () => {
    for (const list of ['initContainers', 'ephemeralContainers']) {
      const verdict = judged((pod) => void (pod.spec[list] = [{ name: 'debug', image: 'busybox' }]));
      expect(verdict.violations.restricted, list).toEqual({
        check: 'allowPrivilegeEscalation',
        sentence: 'container debug: securityContext.allowPrivilegeEscalation unset',
      });
      const privileged = judged(
        (pod) => void (pod.spec[list] = [{ name: 'debug', securityContext: { privileged: true } }]),
      );
      expect(privileged.level, list).toBe('privileged');
    }
  });

  it("admits upstream's allowed values: default capabilities at baseline, NET_BIND_SERVICE at restricted, the safe lists", () => {
    expect(judged((pod) => void (context(pod).capabilities = { drop: ['ALL'], add: ['CHOWN'] })).level).toBe(
      'baseline',
    );
    expect(judged((pod) => void (context(pod).capabilities = { drop: ['ALL'], add: ['NET_BIND_SERVICE'] })).level).toBe(
      'restricted',
    );
    const allowed = judged((pod) => {
      Object.assign(context(pod), { procMount: 'Default', seLinuxOptions: { type: 'container_t', level: 's0:c1' } });
      Object.assign(context(pod), { appArmorProfile: { type: 'RuntimeDefault' } });
      pod.spec.securityContext = { sysctls: [{ name: 'net.ipv4.tcp_rmem', value: '4096 87380 6291456' }] };
      pod.metadata = { annotations: { 'container.apparmor.security.beta.kubernetes.io/webhook': 'localhost/p' } };
      pod.spec.volumes = [{ name: 'scratch' }, { name: 'tls', secret: { secretName: 's' } }];
    });
    expect(allowed).toEqual({ level: 'restricted', violations: {} });
    expect(
      judged(
        (pod) =>
          void (pod.metadata = {
            annotations: { 'container.apparmor.security.beta.kubernetes.io/webhook': 'unconfined' },
          }),
      ).violations.baseline,
    ).toEqual({
      check: 'appArmorProfile',
      sentence: 'annotation container.apparmor.security.beta.kubernetes.io/webhook: unconfined',
    });
  });

  it('skips the three checks upstream skips for a Windows pod', () => {
    const windows = judged((pod) => {
      pod.spec.os = { name: 'windows' };
      for (const key of ['allowPrivilegeEscalation', 'seccompProfile', 'capabilities']) delete context(pod)[key];
    });
    expect(windows.level).toBe('restricted');
  });
});

describe('the edges mutation testing found unasked', () => {
  const judged = (change: (pod: Pod) => void) => {
    const pod = webhookPod();
    change(pod);
    return podSecurityLevel(pod);
  };
  const baselineOf = (change: (pod: Pod) => void) => judged(change).violations.baseline;
  const restrictedOf = (change: (pod: Pod) => void) => judged(change).violations.restricted;

  it('names each host namespace, and takes a zero hostPort, a null hostPath and a null procMount as unset', () => {
    for (const shared of ['hostNetwork', 'hostIPC'])
      expect(baselineOf((pod) => void (pod.spec[shared] = true))?.sentence).toBe(`pod: ${shared} true`);
    const unset = judged((pod) => {
      (webhookContainer(pod).ports as Record<string, unknown>[])[0]!.hostPort = 0;
      pod.spec.volumes = [{ name: 'tls', hostPath: null, secret: { secretName: 's' } }];
      context(pod).procMount = null;
    });
    expect(unset).toEqual({ level: 'restricted', violations: {} });
  });

  it('refuses a SELinux user or role, even beside an allowed type', () => {
    expect(baselineOf((pod) => void (context(pod).seLinuxOptions = { type: 'container_t', user: 'system_u' }))).toEqual(
      {
        check: 'seLinuxOptions',
        sentence: 'container webhook: securityContext.seLinuxOptions user system_u',
      },
    );
    expect(baselineOf((pod) => void (pod.spec.securityContext = { seLinuxOptions: { role: 'system_r' } }))).toEqual({
      check: 'seLinuxOptions',
      sentence: 'pod: securityContext.seLinuxOptions role system_r',
    });
  });

  it("reads only the AppArmor annotations' own prefix, and allows empty and runtime/default", () => {
    const annotated = (annotations: Record<string, string>) =>
      judged((pod) => void (pod.metadata = { annotations })).level;
    expect(annotated({ 'example.com/apparmor': 'unconfined' })).toBe('restricted');
    expect(annotated({ 'container.apparmor.security.beta.kubernetes.io/webhook': '' })).toBe('restricted');
    expect(annotated({ 'container.apparmor.security.beta.kubernetes.io/webhook': 'runtime/default' })).toBe(
      'restricted',
    );
  });

  it('restricted: a container false beside a pod true, a pod Unconfined, a container Unconfined beside a pod RuntimeDefault', () => {
    expect(
      restrictedOf((pod) => {
        pod.spec.securityContext = { runAsNonRoot: true };
        context(pod).runAsNonRoot = false;
      }),
    ).toEqual({ check: 'runAsNonRoot', sentence: 'container webhook: securityContext.runAsNonRoot false' });
    expect(restrictedOf((pod) => void (pod.spec.securityContext = { runAsUser: 0 }))?.sentence).toBe(
      'pod: securityContext.runAsUser 0',
    );
    expect(restrictedOf((pod) => void (pod.spec.securityContext = { seccompProfile: { type: 'Unconfined' } }))).toEqual(
      {
        check: 'seccompProfile_restricted',
        sentence: 'pod: securityContext.seccompProfile.type Unconfined',
      },
    );
    expect(
      restrictedOf((pod) => {
        pod.spec.securityContext = { seccompProfile: { type: 'RuntimeDefault' } };
        context(pod).seccompProfile = {};
      }),
    ).toEqual({
      check: 'seccompProfile_restricted',
      sentence: 'container webhook: securityContext.seccompProfile.type unset',
    });
    expect(restrictedOf((pod) => void (context(pod).capabilities = { drop: ['NET_RAW'] }))).toEqual({
      check: 'capabilities_restricted',
      sentence: 'container webhook: securityContext.capabilities.drop lacks ALL',
    });
  });

  it('names an explicit false or a bad profile before an earlier container that leaves the field unset, as upstream orders them', () => {
    const restrictedContext = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
    const pod = (first: Record<string, unknown>, second: Record<string, unknown>) => ({
      spec: {
        containers: [
          { name: 'a', securityContext: { ...restrictedContext, ...first } },
          { name: 'b', securityContext: { ...restrictedContext, ...second } },
        ],
      },
    });
    const seccomp = { seccompProfile: { type: 'RuntimeDefault' } };
    expect(podSecurityLevel(pod(seccomp, { ...seccomp, runAsNonRoot: false })).violations.restricted?.sentence).toBe(
      'container b: securityContext.runAsNonRoot false',
    );
    const nonRoot = { runAsNonRoot: true };
    expect(
      podSecurityLevel(pod(nonRoot, { ...nonRoot, seccompProfile: { type: 'Unconfined' } })).violations.restricted,
    ).toEqual({
      check: 'seccompProfile_restricted',
      sentence: 'container b: securityContext.seccompProfile.type Unconfined',
    });
  });

  it('a Windows pod whose container has no securityContext is judged by the pod-level fields alone', () => {
    const windows = (podContext: Record<string, unknown>) =>
      podSecurityLevel({ spec: { os: { name: 'windows' }, securityContext: podContext, containers: [{ name: 'w' }] } });
    expect(windows({ runAsNonRoot: true }).level).toBe('restricted');
    expect(windows({ runAsNonRoot: true, runAsUser: 0 }).violations.restricted?.check).toBe('runAsUser');
    expect(windows({}).violations.restricted).toEqual({
      check: 'runAsNonRoot',
      sentence: 'container w: securityContext.runAsNonRoot unset, and not true on the pod',
    });
  });

  it('never throws on what is not a pod, and reads past entries of the wrong type', () => {
    const odd: JudgedPod = {
      spec: {
        containers: [
          null,
          'x',
          { securityContext: [] },
          { name: 'a', securityContext: { capabilities: { add: [1, 'NET_ADMIN'] } } },
        ],
        volumes: 'none',
      },
    };
    expect(podSecurityLevel(odd).violations.baseline).toEqual({
      check: 'capabilities_baseline',
      sentence: 'container a: securityContext.capabilities.add NET_ADMIN',
    });
    expect(
      podSecurityLevel({ spec: { containers: [{ securityContext: { runAsUser: 0 } }] } }).violations.restricted,
    ).toEqual({
      check: 'allowPrivilegeEscalation',
      sentence: 'container : securityContext.allowPrivilegeEscalation unset',
    });
    for (const spec of [undefined, null, [], 'pod']) expect(podSecurityLevel({ spec }).level).toBe('restricted');
  });
});
