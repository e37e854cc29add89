// Generates charts/interlock's templates and values.yaml from `interlock manifest`'s own builders
// (dist/, so `npm run build` first): one source for the objects. Each enumerated value (the mesh,
// --failure-policy) gets a block per value; free strings (image, namespaces) are rendered with a
// sentinel that becomes a Helm expression; pod placement is lifted into values whose defaults are
// the manifest's. `node scripts/chart.mjs` writes the chart; `--print` prints it as JSON instead.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { runManifest } from '../dist/cli/commands/manifest/run.js';
import { INSTALL_RECORD_NAME } from '../dist/cli/commands/manifest/install-record.js';
import { DEFAULT_IMAGE } from '../dist/inject/validator-container.js';
import { MESHES, capturingMesh } from '../dist/mesh/meshes.js';
import { PLATFORMS } from '../dist/config/platform.js';
import { namedForeignNamespaces } from '../dist/cli/commands/manifest/namespace-ownership.js';
import { failClosedExemptions } from '../dist/mesh/fail-closed-exemptions.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const REPO = 'registry.invalid/interlock-chart-repository';
const TAG = 'interlock-chart-tag';
const SENTINELS = [
  [`${REPO}:${TAG}`, '{{ .Values.image.repository }}:{{ .Values.image.tag }}'],
  [REPO, '{{ .Values.image.repository }}'],
  ['interlock-chart-agent-namespace', '{{ .Values.nodeAgent.namespace }}'],
  ['interlock-chart-webhook-namespace', '{{ .Values.webhook.namespace }}'],
  ['interlock-chart-metrics-namespace', '{{ .Values.webhook.metricsNamespace }}'],
  ['/interlock-chart-cni-bin', '{{ .Values.nodeAgent.cniBinDir }}'],
  ['/interlock-chart-cni-conf', '{{ .Values.nodeAgent.cniConfDir }}'],
];
// manifest --webhook --ca-bundle writes the file's PEM base64-encoded: the chart encodes its value.
const CA_PEM = '-----BEGIN CERTIFICATE-----\ninterlock-chart-ca-bundle\n-----END CERTIFICATE-----\n';
const CA_SENTINEL = [Buffer.from(CA_PEM).toString('base64'), '{{ .Values.webhook.caBundle | b64enc }}'];
const POD_FIELDS = ['nodeSelector', 'tolerations', 'priorityClassName'];
const FAILURE_POLICIES = ['Ignore', 'Fail'];
const EXEMPT_SENTINEL = 'interlock-chart-exempt';

/**
 * webhook.exemptNamespaces as manifest --exempt-namespaces: the list given, else (with Fail only)
 * manifest's default; each name an item of the namespaceSelector's NotIn values.
 */
function exemptItems(text, policy) {
  const defaults =
    policy === 'Fail'
      ? `(list ${failClosedExemptions()
          .map((n) => `"${n}"`)
          .join(' ')})`
      : 'list';
  return text.replace(
    new RegExp(`^( *)- ${EXEMPT_SENTINEL}$`, 'gm'),
    (_, pad) =>
      `${pad}{{- range (.Values.webhook.exemptNamespaces | default ${defaults}) }}\n${pad}- {{ . }}\n${pad}{{- end }}`,
  );
}

class Refused extends Error {}

async function render(argv) {
  const outcome = await runManifest(argv, {});
  if (outcome.exitCode !== 0) throw new Refused(outcome.stderr.split('\n')[0]);
  if (outcome.stdout.includes('{{'))
    throw new Error(`interlock manifest ${argv.join(' ')}: prints {{, which Helm would read`);
  // manifest's install record is the chart's Helm release: helm keeps what it installed, with its values.
  return parseAllDocuments(outcome.stdout)
    .map((document) => document.toJS())
    .filter((object) => object?.metadata?.labels?.['app.kubernetes.io/name'] !== INSTALL_RECORD_NAME);
}

/** Lifts the pod's placement and the main container's resources into values; returns their defaults. */
function liftPlacement(objects, part) {
  const defaults = {};
  for (const object of objects) {
    const pod = object.spec?.template?.spec;
    if (!pod) continue;
    for (const field of POD_FIELDS) {
      if (pod[field] !== undefined) defaults[field] = pod[field];
      delete pod[field];
    }
    pod[`ilkpod${part}`] = 'here';
    for (const container of pod.containers ?? []) {
      if (!String(container.image).startsWith(REPO)) continue;
      if (container.resources !== undefined) defaults.resources = container.resources;
      delete container.resources;
      container[`ilkcontainer${part}`] = 'here';
    }
  }
  return defaults;
}

function podBlock(indent, part) {
  const pad = ' '.repeat(indent);
  const block = (field, body) => `${pad}{{- with .Values.${part}.${field} }}\n${body}\n${pad}{{- end }}`;
  return [
    block('imagePullSecrets', `${pad}imagePullSecrets:\n${pad}  {{- toYaml . | nindent ${indent + 2} }}`),
    block('nodeSelector', `${pad}nodeSelector:\n${pad}  {{- toYaml . | nindent ${indent + 2} }}`),
    block('tolerations', `${pad}tolerations:\n${pad}  {{- toYaml . | nindent ${indent + 2} }}`),
    block('priorityClassName', `${pad}priorityClassName: {{ . }}`),
  ].join('\n');
}

function containerBlock(indent, part) {
  const pad = ' '.repeat(indent);
  return [
    `${pad}{{- with $.Values.image.pullPolicy }}\n${pad}imagePullPolicy: {{ . }}\n${pad}{{- end }}`,
    `${pad}{{- with $.Values.${part}.resources }}\n${pad}resources:\n${pad}  {{- toYaml . | nindent ${indent + 2} }}\n${pad}{{- end }}`,
  ].join('\n');
}

function templateText(objects, part) {
  let text = objects.map((object) => stringify(object, { lineWidth: 0 })).join('---\n');
  text = text
    .replace(new RegExp(`^( *)ilkpod${part}: here$`, 'gm'), (_, pad) => podBlock(pad.length, part))
    .replace(new RegExp(`^( *)ilkcontainer${part}: here$`, 'gm'), (_, pad) => containerBlock(pad.length, part));
  for (const [sentinel, expression] of [CA_SENTINEL, ...SENTINELS]) text = text.split(sentinel).join(expression);
  return text;
}

function sameDefaults(all) {
  const [first, ...rest] = all.map((defaults) => JSON.stringify(defaults));
  if (rest.some((other) => other !== first)) throw new Error('pod placement differs between variants');
  return all[0];
}

const condition = (clauses) => `{{- if and ${clauses.join(' ')} }}`;
const block = (clauses, text) => `${condition(clauses)}\n---\n${text.trimEnd()}\n{{- end }}\n`;
const meshIs = (mesh) => `(eq .Values.mesh "${mesh}")`;
const platformIs = (platform) => `(eq .Values.platform "${platform}")`;

async function nodeAgentTemplate() {
  const defaults = [];
  const blocks = [];
  for (const [mesh, platform] of MESHES.flatMap((m) => PLATFORMS.map((p) => [m, p]))) {
    for (const audit of [false, true]) {
      const cni = audit
        ? ['--cni-audit', '--cni-bin-dir=/interlock-chart-cni-bin', '--cni-conf-dir=/interlock-chart-cni-conf']
        : [];
      const auditClause = audit ? '.Values.nodeAgent.cniAudit' : '(not .Values.nodeAgent.cniAudit)';
      const clauses = ['.Values.nodeAgent.enabled', meshIs(mesh), platformIs(platform), auditClause];
      const objects = await render([
        '--node-agent',
        `--mesh=${mesh}`,
        `--platform=${platform}`,
        ...cni,
        `--image=${REPO}:${TAG}`,
        '--namespace=interlock-chart-agent-namespace',
      ]).catch((error) => error);
      // What manifest refuses, the chart refuses with manifest's own words.
      if (objects instanceof Refused) {
        blocks.push(`${condition(clauses)}\n{{- fail ${JSON.stringify(objects.message)} }}\n{{- end }}\n`);
        continue;
      }
      if (objects instanceof Error) throw objects;
      defaults.push(liftPlacement(objects, 'nodeAgent'));
      blocks.push(block(clauses, templateText(objects, 'nodeAgent')));
    }
  }
  return { text: blocks.join(''), defaults: sameDefaults(defaults) };
}

/** The webhook's variants: with the CA given (webhook.caBundle) or cert-manager's, per mesh capture, platform and policy. */
async function webhookTemplate() {
  const captured = capturingMesh()?.mesh;
  const defaults = [];
  const blocks = [];
  const dir = mkdtempSync(join(tmpdir(), 'interlock-chart-'));
  try {
    const caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, CA_PEM);
    for (const [capturing, platform] of [false, true].flatMap((c) => PLATFORMS.map((p) => [c, p])))
      for (const [policy, ca] of FAILURE_POLICIES.flatMap((p) => [false, true].map((c) => [p, c]))) {
        const objects = await render([
          '--webhook',
          ...(capturing ? [`--mesh=${captured}`] : []),
          `--platform=${platform}`,
          `--image=${REPO}:${TAG}`,
          '--namespace=interlock-chart-webhook-namespace',
          `--failure-policy=${policy}`,
          `--exempt-namespaces=${EXEMPT_SENTINEL}`,
          '--metrics-namespace=interlock-chart-metrics-namespace',
          ...(ca ? [`--ca-bundle=${caFile}`] : []),
        ]);
        defaults.push(liftPlacement(objects, 'webhook'));
        const clauses = [
          '.Values.webhook.enabled',
          capturing ? meshIs(captured) : `(ne .Values.mesh "${captured}")`,
          platformIs(platform),
          `(eq .Values.webhook.failurePolicy "${policy}")`,
          ca ? '.Values.webhook.caBundle' : '(not .Values.webhook.caBundle)',
        ];
        blocks.push(block(clauses, exemptItems(templateText(objects, 'webhook'), policy)));
      }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { text: blocks.join(''), defaults: sameDefaults(defaults) };
}

/** The namespaces manifest refuses by name (beside every kube-*), as a Helm list's items. */
const foreignList = () =>
  namedForeignNamespaces()
    .map((namespace) => `"${namespace}"`)
    .join(' ');

const checks = () =>
  [
    // The node agent needs its mesh named, as manifest --node-agent does; the webhook alone does not.
    '{{- if and .Values.nodeAgent.enabled (not .Values.mesh) }}',
    `{{- fail "mesh is required with nodeAgent.enabled (${MESHES.join(', ')}): the node agent judges only that mesh's validators" }}`,
    '{{- end }}',
    `{{- if and .Values.mesh (not (has .Values.mesh (list ${MESHES.map((mesh) => `"${mesh}"`).join(' ')}))) }}`,
    `{{- fail (printf "mesh %q: expected one of ${MESHES.join(', ')}" .Values.mesh) }}`,
    '{{- end }}',
    `{{- if not (has .Values.webhook.failurePolicy (list ${FAILURE_POLICIES.map((p) => `"${p}"`).join(' ')})) }}`,
    `{{- fail (printf "webhook.failurePolicy %q: expected ${FAILURE_POLICIES.join(' or ')}" .Values.webhook.failurePolicy) }}`,
    '{{- end }}',
    // What manifest refuses as a part's --namespace (Kubernetes', the meshes', others'), the chart refuses.
    ...['nodeAgent', 'webhook'].flatMap((part) => [
      `{{- if and .Values.${part}.enabled (or (hasPrefix "kube-" .Values.${part}.namespace) (has .Values.${part}.namespace (list ${foreignList()}))) }}`,
      `{{- fail (printf "${part}.namespace %q is not Interlock's: the chart owns its namespace, and helm uninstall would delete it" .Values.${part}.namespace) }}`,
      '{{- end }}',
    ]),
    `{{- if not (has .Values.platform (list ${PLATFORMS.map((p) => `"${p}"`).join(' ')})) }}`,
    `{{- fail (printf "platform %q: expected ${PLATFORMS.join(' or ')}" .Values.platform) }}`,
    '{{- end }}',
    '',
  ].join('\n');

function valuesText(agentDefaults, webhookDefaults) {
  const [repository, tag] = [DEFAULT_IMAGE.replace(/:[^/:]*$/, ''), DEFAULT_IMAGE.replace(/^.*:/, '')];
  const part = (enabled, namespace, defaults, extra) => ({
    enabled,
    namespace,
    ...extra,
    imagePullSecrets: [],
    nodeSelector: defaults.nodeSelector ?? {},
    tolerations: defaults.tolerations ?? [],
    priorityClassName: defaults.priorityClassName ?? '',
    resources: defaults.resources ?? {},
  });
  const values = {
    mesh: '',
    platform: 'kubernetes',
    image: { repository, tag, pullPolicy: '' },
    nodeAgent: part(true, 'interlock-system', agentDefaults, {
      cniAudit: false,
      cniBinDir: '/opt/cni/bin',
      cniConfDir: '/etc/cni/net.d',
    }),
    webhook: part(false, 'interlock-webhook', webhookDefaults, {
      failurePolicy: 'Ignore',
      exemptNamespaces: [],
      caBundle: '',
      metricsNamespace: 'monitoring',
    }),
  };
  return [
    '# Generated by scripts/chart.mjs from `interlock manifest` (npm run chart); do not edit.',
    `# mesh: ${MESHES.join(', ')} (the node agent's --mesh, required with nodeAgent.enabled; the webhook takes it only for ${capturingMesh()?.mesh}).`,
    '# image: the repository and tag are published by you (npm run image, then push).',
    '# nodeAgent/webhook: manifest --node-agent / --webhook, each in its own namespace;',
    "# placement defaults are the manifest's own. nodeAgent.cniAudit: the agent's --cni-audit, with",
    '# --cni-bin-dir and --cni-conf-dir from cniBinDir and cniConfDir (a platform file may pin them).',
    `# webhook.exemptNamespaces: never sent to the webhook (beside kube-system and its own), as manifest`,
    `# --exempt-namespaces; empty: with failurePolicy Fail ${failClosedExemptions().join(', ')}, else none.`,
    "# webhook.caBundle: the serving certificate's CA, PEM (--set-file webhook.caBundle=ca.crt), as",
    '# manifest --ca-bundle; you then create the Secret interlock-webhook-tls. Empty: cert-manager.',
    stringify(values, { lineWidth: 0 }),
  ].join('\n');
}

export async function chartFiles() {
  const agent = await nodeAgentTemplate();
  const webhook = await webhookTemplate();
  const version = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).version;
  const header = '# Generated by scripts/chart.mjs from `interlock manifest` (npm run chart); do not edit.\n';
  return {
    'Chart.yaml': `${header}apiVersion: v2\nname: interlock\ndescription: Interlock's node agent and admission webhook, as printed by interlock manifest.\ntype: application\nversion: ${version}\nappVersion: "${version}"\nkubeVersion: ">=1.30.0-0"\n`,
    'values.yaml': valuesText(agent.defaults, webhook.defaults),
    'templates/checks.yaml': `${header}${checks()}`,
    'templates/node-agent.yaml': `${header}${agent.text}`,
    'templates/webhook.yaml': `${header}${webhook.text}`,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = await chartFiles();
  if (process.argv.includes('--print')) process.stdout.write(JSON.stringify(files));
  else
    for (const [name, text] of Object.entries(files)) {
      const path = join(repo, 'charts/interlock', name);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
    }
}
