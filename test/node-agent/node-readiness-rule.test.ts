import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { MESH_CONDITION } from '../../src/node-agent/node-gate.js';

// The NodeReadinessRule docs/node-agent.md gives for the Node Readiness Controller, held to the
// controller's own CRD (v0.5.0): its required fields, its enums and the CEL rules on the taint.
type Schema = {
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: string[];
  items?: Schema;
  'x-kubernetes-validations'?: { rule: string }[];
};
const CRD = parse(
  readFileSync(new URL('../fixtures/kube/node-readiness-controller/nodereadinessrules.yaml', import.meta.url), 'utf8'),
) as {
  spec: {
    group: string;
    names: { kind: string };
    scope: string;
    versions: { name: string; schema: { openAPIV3Schema: Schema } }[];
  };
};
const DOC = readFileSync(new URL('../../docs/node-agent.md', import.meta.url), 'utf8');
const rule = parse(
  /```yaml\n( *apiVersion: readiness\.node\.x-k8s\.io[\s\S]*?)```/.exec(DOC)![1]!.replace(/^ {2}/gm, ''),
) as {
  apiVersion: string;
  kind: string;
  spec: Record<string, unknown> & {
    conditions: { type: string; requiredStatus: string }[];
    taint: { key: string; effect: string; value?: string };
  };
};
const version = CRD.spec.versions.find((v) => `${CRD.spec.group}/${v.name}` === rule.apiVersion);
const spec = version?.schema.openAPIV3Schema.properties?.spec as Schema;

/** The CEL rules on the taint that are plain string tests, evaluated as CEL defines them. */
function taintRuleHolds(celRule: string, taint: { key: string; effect: string; value?: string }): boolean | undefined {
  const name = taint.key.split('/')[1] ?? '';
  const startsWith = /^self\.key\.startsWith\('([^']+)'\)$/.exec(celRule);
  if (startsWith) return taint.key.startsWith(startsWith[1]!);
  if (celRule === "size(self.key.split('/')) == 2") return taint.key.split('/').length === 2;
  if (celRule === 'self.key.size() <= 253') return taint.key.length <= 253;
  const matches = /^self\.key\.split\('\/'\)\[1\]\.matches\('(.+)'\)$/.exec(celRule);
  if (matches) return new RegExp(matches[1]!).test(name);
  if (celRule.startsWith("size(self.key.split('/')[1]) > 0")) return name.length > 0 && name.length <= 63;
  if (celRule === '!has(self.value) || self.value.size() <= 63') return (taint.value ?? '').length <= 63;
  const effects = /^self\.effect in \[(.+)\]$/.exec(celRule);
  if (effects)
    return effects[1]!
      .split(',')
      .map((e) => e.trim().replace(/'/g, ''))
      .includes(taint.effect);
  return undefined; // the immutability rules (oldSelf) judge updates only
}

describe('the NodeReadinessRule in docs/node-agent.md, held to the controller CRD (v0.5.0)', () => {
  it('is the CRD kind at a served version, keyed on the condition the agent writes', () => {
    expect(rule.kind).toBe(CRD.spec.names.kind);
    expect(CRD.spec.scope).toBe('Cluster');
    expect(version).toBeDefined();
    expect(rule.spec.conditions).toEqual([{ type: MESH_CONDITION, requiredStatus: 'True' }]);
  });

  it('has every required field, and each enum value the CRD allows', () => {
    for (const field of spec.required ?? []) expect(rule.spec, field).toHaveProperty(field);
    expect(spec.properties!.enforcementMode!.enum).toContain(rule.spec.enforcementMode);
    const condition = spec.properties!.conditions!.items!;
    for (const entry of rule.spec.conditions) {
      for (const field of condition.required ?? []) expect(entry).toHaveProperty(field);
      expect(condition.properties!.requiredStatus!.enum).toContain(entry.requiredStatus);
    }
  });

  it("passes the CRD's CEL rules on the taint, each of which a wrong key fails", () => {
    const rules = (spec.properties!.taint!['x-kubernetes-validations'] ?? []).map((v) => v.rule);
    expect(rules.some((r) => r.includes('startsWith'))).toBe(true);
    for (const celRule of rules) expect(taintRuleHolds(celRule, rule.spec.taint), celRule).not.toBe(false);
    // The rules are read, not assumed: Istio's key and a key with two slashes are refused.
    const refused = (key: string) =>
      rules.some((celRule) => taintRuleHolds(celRule, { ...rule.spec.taint, key }) === false);
    expect(refused('cni.istio.io/not-ready')).toBe(true);
    expect(refused('readiness.k8s.io/a/b')).toBe(true);
  });
});
