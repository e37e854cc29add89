import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { compatModeOf, compatToValidate } from '../../src/compat/compat-argv.js';
import { parsePorts } from '../../src/config/flag-parsers.js';
import { parseCommandLine } from '../../src/config/parse-command-line.js';
import { buildValidateConfig, VALIDATE_FLAGS, type ValidateConfig } from '../../src/config/validate-config.js';
import { meshIdentity } from '../../src/mesh/meshes.js';

/** kuma-validation as Kuma's injector renders it (inject.34 golden, pinned in sources.json). */
const GOLDEN = path.resolve(import.meta.dirname, '../fixtures/meshes/kuma/2.14.3/injector/inject.34.golden.yaml');
interface Container {
  name: string;
  command: string[];
  args: string[];
  securityContext: { runAsUser: number; runAsGroup: number };
}
const rendered = (parseYaml(readFileSync(GOLDEN, 'utf8')) as { spec: { initContainers: Container[] } }).spec
  .initContainers;
const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-kumactl-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The image's shim at /usr/bin/kumactl passes the bare name first. */
function configOf(argv: readonly string[]): ValidateConfig | string {
  const mapped = compatToValidate(argv, {});
  if (mapped === undefined) throw new Error('not a drop-in argv');
  if (!mapped.ok) return mapped.error.message;
  const parsed = parseCommandLine('validate', mapped.value.slice(1), {}, VALIDATE_FLAGS);
  const built = parsed.ok ? buildValidateConfig(parsed.value) : parsed;
  return built.ok ? built.value : built.error.message;
}

function parsedPorts(text: string) {
  const parsed = parsePorts(text);
  if (!parsed.ok) throw new Error(text);
  return parsed.value;
}

function must(result: ValidateConfig | string): ValidateConfig {
  if (typeof result === 'string') throw new Error(result);
  return result;
}

describe("kumactl install transparent-proxy-validator, exactly as Kuma's injector renders it", () => {
  const validation = rendered.find((container) => container.name === meshIdentity('kuma').containers.validator);

  it('is the injected kuma-validation: the command, uid/gid 5678 and the module agree', () => {
    expect(validation?.command).toEqual(meshIdentity('kuma').dropIn?.command);
    expect(validation?.securityContext.runAsUser).toBe(meshIdentity('kuma').validatorUid);
    expect(validation?.securityContext.runAsGroup).toBe(meshIdentity('kuma').validatorUid);
    // The application's init container comes after kuma-validation only with kuma.io/init-first.
    expect(rendered.map((container) => container.name).at(-1)).toBe('init');
  });

  it('maps its argv onto validate with Kuma’s preset, the port and family it names', () => {
    if (!validation) throw new Error('no kuma-validation in the golden');
    const argv = ['kumactl', ...validation.command.slice(1), ...validation.args];
    expect(compatModeOf(argv)).toBe('kuma');
    const config = must(configOf(argv));
    expect(config.interception.mesh).toBe('kuma');
    expect(config.interception.inboundPort).toBe(15055);
    expect(config.interception.outboundPort).toBe(15001);
    expect(config.interception.proxyUids).toEqual([5678]);
    expect(config.family).toBe('ipv4');
    expect(config.failureExitCode).toBe(meshIdentity('kuma').failureExitCode);
  });

  it('reads --transparent-proxy-config files (base, then the custom ConfigMap), later ones winning', () => {
    const base = path.join(scratch, 'base.yaml');
    const custom = path.join(scratch, 'custom.yaml');
    writeFileSync(base, 'kumaDPUser: "5678"\nipFamilyMode: dualstack\nredirect:\n  inbound:\n    port: 15006\n');
    writeFileSync(
      custom,
      'redirect:\n  inbound:\n    port: 16006\n    excludePorts: [4444, 55555]\n  outbound:\n    excludePorts: [22]\n  dns:\n    enabled: true\n    port: 15053\n',
    );
    const argv = ['kumactl', 'install', 'transparent-proxy-validator', '--config-file=/tmp/.kumactl'];
    const config = must(
      configOf([...argv, `--transparent-proxy-config=${base}`, `--transparent-proxy-config=${custom}`]),
    );
    expect(config.interception.inboundPort).toBe(16006);
    expect(config.family).toBe('auto');
    expect(config.interception.dnsCapture).toBeDefined();
    expect(config.interception.dnsPort).toBe(15053);
    expect(config.interception.excludeOutboundPorts).toEqual(parsedPorts('22'));
    expect(config.interception.excludeInboundPorts).toEqual(parsedPorts('4444,55555'));
    // Comma-separated paths in one value are read in order too.
    expect(must(configOf([...argv, `--transparent-proxy-config=${base},${custom}`])).interception.inboundPort).toBe(
      16006,
    );
  });

  it('refuses what it cannot honour, naming it, never passing on a guess', () => {
    const argv = ['kumactl', 'install', 'transparent-proxy-validator'];
    expect(configOf([...argv, '--transparent-proxy-config=-'])).toMatch(/no input to read/);
    expect(configOf([...argv, `--transparent-proxy-config=${path.join(scratch, 'absent.yaml')}`])).toMatch(
      /absent\.yaml/,
    );
    expect(configOf([...argv, '--ip-family-mode=both'])).toMatch(/"both"/);
    expect(configOf([...argv, '--skip-dns'])).toMatch(/--skip-dns/);
    expect(configOf(['kumactl', 'install', 'transparent-proxy'])).toMatch(/stands in for/);
    expect(configOf([...argv, '--help'])).toMatch(/not a verdict/);
    const list = path.join(scratch, 'list.yaml');
    writeFileSync(list, '- 1\n');
    expect(configOf([...argv, `--transparent-proxy-config=${list}`])).toMatch(
      /list\.yaml: line 1: expected "key: value"/,
    );
    const anchor = path.join(scratch, 'anchor.yaml');
    writeFileSync(anchor, 'redirect: &r\n  inbound:\n    port: 1\n');
    expect(configOf([...argv, `--transparent-proxy-config=${anchor}`])).toMatch(/line 1: YAML Interlock does not read/);
  });

  it('with a config, takes family and port from it (or its defaults), never from the flags, as kumactl does', () => {
    // kumactl loads DefaultDataplaneConfig under the configs and then reads only them
    // (install_transparent_proxy_validator.go, v2.14.3): --ip-family-mode and
    // --validation-server-port count only when no --transparent-proxy-config is given.
    const base = path.join(scratch, 'defaults-only.yaml');
    writeFileSync(base, 'kumaDPUser: "5678"\n');
    const argv = ['kumactl', 'install', 'transparent-proxy-validator', '--config-file=/tmp/.kumactl'];
    const flags = ['--ip-family-mode=ipv4', '--validation-server-port=15055'];
    for (const order of [
      [...flags, `--transparent-proxy-config=${base}`],
      [`--transparent-proxy-config=${base}`, ...flags],
    ]) {
      const config = must(configOf([...argv, ...order]));
      expect(config.interception.inboundPort, order.join(' ')).toBe(15006);
      expect(config.family, order.join(' ')).toBe('auto');
    }
    // Values cobra refuses are refused whether or not a config follows.
    const withConfig = [...argv, `--transparent-proxy-config=${base}`];
    expect(configOf([...withConfig, '--ip-family-mode=both'])).toMatch(/"both"/);
    expect(configOf([...withConfig, '--validation-server-port=70000'])).toMatch(/"70000": expected a port/);
  });

  it('merges the configs as kumactl does: mappings key by key, a later list replacing an earlier one whole', () => {
    const argv = ['kumactl', 'install', 'transparent-proxy-validator', '--config-file=/tmp/.kumactl'];
    const base = path.join(scratch, 'merge-base.yaml');
    const cleared = path.join(scratch, 'merge-cleared.yaml');
    const silent = path.join(scratch, 'merge-silent.yaml');
    writeFileSync(
      base,
      'redirect:\n  outbound:\n    excludePortsForUIDs:\n    - "tcp:22:106"\n    excludePorts: [22]\n',
    );
    writeFileSync(cleared, 'redirect:\n  outbound:\n    excludePortsForUIDs: []\n');
    writeFileSync(silent, 'redirect:\n  inbound:\n    port: 16006\n');
    // The custom ConfigMap empties the base's per-uid list: nothing unmodelled is left.
    const config = must(
      configOf([...argv, `--transparent-proxy-config=${base}`, `--transparent-proxy-config=${cleared}`]),
    );
    expect(config.interception.excludeOutboundPorts).toEqual(parsedPorts('22'));
    // One that does not mention it keeps the base's, which is refused, named.
    expect(configOf([...argv, `--transparent-proxy-config=${base}`, `--transparent-proxy-config=${silent}`])).toMatch(
      /redirect\.outbound\.excludePortsForUIDs is set/,
    );
  });

  it("names DNS capture limited to resolv.conf's servers (captureAll false), which it does not model", () => {
    const argv = ['kumactl', 'install', 'transparent-proxy-validator', '--config-file=/tmp/.kumactl'];
    const file = path.join(scratch, 'dns-servers-only.yaml');
    writeFileSync(file, 'redirect:\n  dns:\n    enabled: true\n    captureAll: false\n');
    expect(configOf([...argv, `--transparent-proxy-config=${file}`])).toMatch(/redirect\.dns\.captureAll is false/);
    // With DNS redirection off, captureAll changes no rule.
    writeFileSync(file, 'redirect:\n  dns:\n    enabled: false\n    captureAll: false\n');
    expect(must(configOf([...argv, `--transparent-proxy-config=${file}`])).interception.dnsCapture).toBeUndefined();
  });

  it("reads upstream's with-multiple-config-flags sources in order, at the mount paths the injector renders", () => {
    // NewValidationContainer: the control plane's ConfigMap at /tmp/transparent-proxy/base, the
    // pod's (traffic.kuma.io/transparent-proxy-configmap-name) at /tmp/transparent-proxy/custom,
    // each its config.yaml; here in a scratch folder of the same shape.
    const sources = path.resolve(path.dirname(GOLDEN), '../transparentproxy-config');
    const mount = (name: string, source: string) => {
      const dir = path.join(scratch, 'transparent-proxy', name);
      mkdirSync(dir, { recursive: true });
      copyFileSync(path.join(sources, `with-multiple-config-flags.${source}`), path.join(dir, 'config.yaml'));
      return `--transparent-proxy-config=${path.join(dir, 'config.yaml')}`;
    };
    const argv = ['kumactl', 'install', 'transparent-proxy-validator', '--config-file=/tmp/.kumactl'];
    // /1.yaml alone turns DNS redirection off.
    const first = must(configOf([...argv, mount('base', '1.yaml')]));
    expect(first.interception.dnsCapture).toBeUndefined();
    expect(first.interception.dnsPort).toBe(7777);
    // /2.yaml after it turns it on at 8888 and excludes outbound addresses: refused, named.
    expect(configOf([...argv, mount('base', '1.yaml'), mount('custom', '2.yaml')])).toMatch(
      /transparent-proxy\/custom\/config\.yaml: redirect\.outbound\.excludePortsForIPs is set/,
    );
    // Upstream's stdin document last: its settings are named, the first in Interlock's order.
    expect(configOf([...argv, mount('base', '2.yaml'), mount('custom', 'stdin.yaml')])).toMatch(
      /redirect\.inbound\.excludePortsForIPs is set/,
    );
  });

  it("reads the chart's own transparent-proxy ConfigMap (values.yaml's default, rendered as toYaml does)", () => {
    const values = parseYaml(readFileSync(path.join(path.dirname(GOLDEN), '../chart/values.yaml'), 'utf8')) as {
      transparentProxy: { configMap: { config: unknown } };
    };
    const file = path.join(scratch, 'config.yaml');
    writeFileSync(file, toYaml(values.transparentProxy.configMap.config));
    const argv = ['kumactl', 'install', 'transparent-proxy-validator', '--config-file=/tmp/.kumactl'];
    const config = must(configOf([...argv, `--transparent-proxy-config=${file}`]));
    expect(config.interception.inboundPort).toBe(15006);
    expect(config.interception.outboundPort).toBe(15001);
    expect(config.interception.proxyUids).toEqual([5678]);
    expect(config.interception.dnsCapture).toBeDefined();
    expect(config.interception.dnsPort).toBe(15053);
    expect(config.family).toBe('auto');
    // A setting that exempts traffic Interlock does not model is refused, not ignored.
    writeFileSync(file, 'redirect:\n  outbound:\n    excludePortsForUIDs:\n    - "tcp:22:106"\n');
    expect(configOf([...argv, `--transparent-proxy-config=${file}`])).toMatch(/excludePortsForUIDs is set/);
  });
});
