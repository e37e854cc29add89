// The layers of docs/ARCHITECTURE.md, enforced on src/ by scripts/test.sh: a folder imports only
// its own files and folders of a LOWER rank (peers of one rank do not import each other), and
// no module cycle anywhere. A folder missing from the table is an error until it is ranked here.
/** rank -> folders under src/, exactly as the table in docs/ARCHITECTURE.md. */
const LAYERS = [
  ['reason'],
  ['addr', 'file', 'serve'],
  ['mesh'],
  ['rules', 'config'],
  ['trace'],
  ['expect'],
  ['rules-check', 'network', 'netlink'],
  ['probe'],
  ['verdict'],
  ['validate', 'output'],
  ['kube', 'compat'],
  ['inject', 'cni', 'node-agent'],
  ['webhook'],
  ['cli'],
  ['snapshot'],
];

/**
 * Same-rank imports the base code makes, allowed in this direction only (the reverse stays
 * forbidden, so the pair cannot form a cycle). Each is an adapter or a use case leaning on its
 * peer; the lead decides at merge whether to re-rank them in docs/ARCHITECTURE.md instead.
 */
const PEER_IMPORTS = [
  ['netlink', 'network'], // the rtnetlink adapter builds the pod network model
  ['validate', 'output'], // the validate use case logs through the output adapter
];

const rankOf = new Map(LAYERS.flatMap((folders, rank) => folders.map((folder) => [folder, rank])));
const escape = (name) => name.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
const anyOf = (folders) => `^src/(${folders.map(escape).join('|')})/`;

/** For each folder, every other folder of its rank or above is out of bounds. */
const layerRules = [...rankOf]
  .map(([folder, rank]) => {
    const allowedPeer = (other) => PEER_IMPORTS.some(([from, to]) => from === folder && to === other);
    const forbidden = [...rankOf]
      .filter(([other, otherRank]) => other !== folder && otherRank >= rank && !allowedPeer(other))
      .map(([other]) => other);
    return {
      name: `layer-${folder}`,
      comment: `src/${folder}/ (rank ${rank}) may import only folders of a lower rank (docs/ARCHITECTURE.md)`,
      severity: 'error',
      from: { path: anyOf([folder]) },
      to: { path: anyOf(forbidden) },
    };
  })
  .filter((rule) => rule.to.path !== '^src/()/');

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'unranked-folder',
      comment: 'every folder of src/ has a rank in docs/ARCHITECTURE.md and in this file',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/', pathNot: anyOf([...rankOf.keys()]) },
    },
    {
      name: 'unranked-importer',
      comment: 'every folder of src/ has a rank in docs/ARCHITECTURE.md and in this file',
      severity: 'error',
      from: { path: '^src/', pathNot: anyOf([...rankOf.keys()]) },
      to: {},
    },
    {
      name: 'no-circular',
      comment: 'no import cycle, between folders or inside one',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'src-stays-in-src',
      comment: 'production code never imports tests, scripts or the e2e harness',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|e2e|scripts)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.d.ts'],
    },
  },
};
