import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { MODE_FLAGS, runManifest } from '../../../../src/cli/commands/manifest/run.js';
import { VERSION } from '../../../../src/config/version.js';
import { RECOMMENDED_LABEL_KEYS } from '../../../../src/kube/interlock-labels.js';

type Doc = Record<string, ReturnType<typeof JSON.parse>>;

/** The component each object mode prints (the container snippet is no object: it has no labels). */
const COMPONENT: Record<string, string> = {
  rbac: 'validator-events',
  'node-agent': 'node-agent',
  webhook: 'webhook',
  monitoring: 'monitoring',
};

describe('every object manifest prints carries the recommended labels', () => {
  it('names a component for every object mode of the flag table', () => {
    expect(
      Object.keys(MODE_FLAGS)
        .filter((mode) => mode !== 'container')
        .sort(),
    ).toEqual(Object.keys(COMPONENT).sort());
    expect(RECOMMENDED_LABEL_KEYS).toEqual([
      'app.kubernetes.io/name',
      'app.kubernetes.io/component',
      'app.kubernetes.io/part-of',
      'app.kubernetes.io/version',
      'app.kubernetes.io/managed-by',
    ]);
  });

  it.each(Object.entries(COMPONENT))(
    '--%s: on each object and pod template; never the version in a selector',
    async (mode, component) => {
      // The node agent needs its mesh named.
      const outcome = await runManifest([`--${mode}`, ...(mode === 'node-agent' ? ['--mesh', 'linkerd'] : [])], {});
      expect(outcome.exitCode, outcome.stderr).toBe(0);
      const documents = parseAllDocuments(outcome.stdout).map((document) => document.toJS() as Doc);
      expect(documents.length).toBeGreaterThan(1);
      for (const document of documents) {
        const what = `${document.kind}/${document.metadata.name}`;
        const labels = document.metadata.labels as Record<string, string>;
        for (const key of RECOMMENDED_LABEL_KEYS) expect(labels, what).toHaveProperty([key]);
        expect(labels['app.kubernetes.io/component'], what).toBe(component);
        expect(labels['app.kubernetes.io/version'], what).toBe(VERSION);
        expect(labels['app.kubernetes.io/managed-by'], what).toBe('interlock');
        expect(labels['app.kubernetes.io/part-of'], what).toBe('interlock');
        const template = document.spec?.template?.metadata?.labels as Record<string, string> | undefined;
        if (template)
          for (const key of RECOMMENDED_LABEL_KEYS) expect(template, `${what} template`).toHaveProperty([key]);
        const selector = JSON.stringify(document.spec?.selector ?? {});
        expect(selector, what).not.toContain('app.kubernetes.io/version');
      }
    },
  );
});
