import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
