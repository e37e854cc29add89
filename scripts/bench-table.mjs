// Prints the docs' start-up and boot-storm table from what `npm run bench` wrote (dist/bench:
// startup.json from scripts/bench-validate.mjs, storm-100.json from scripts/bench-storm.mjs), with
// the machine and the date the figures were measured on. With --write FILE, replaces the text
// between FILE's `<!-- bench:startup -->` and `<!-- /bench:startup -->` markers instead.
//   node scripts/bench-table.mjs [--results DIR] [--write docs/benchmarks.md]
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const option = (name) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};
const results = resolve(root, option('--results') ?? 'dist/bench');
const BEGIN = '<!-- bench:startup -->';
const END = '<!-- /bench:startup -->';

const read = (file) =>
  existsSync(join(results, file)) ? JSON.parse(readFileSync(join(results, file), 'utf8')) : undefined;
const ms = (value) => `${value.toFixed(1)} ms`;
const s = (value) => (Number.isFinite(value) ? `${(value / 1000).toFixed(2)} s` : 'never');
const machineLine = (m) => `${m.nproc} CPUs (${m.cpu}), kernel ${m.kernel}, node ${m.node}, ${m.date}`;

/** The table as Markdown lines: what the "done when" asks for, with its targets. */
export function startupTable(startup, storm) {
  const lines = [];
  if (startup) {
    const [envName, rows] = Object.entries(startup.environments)[0];
    const row = (name) => rows[name];
    const shipped = row('snapshot');
    lines.push(
      `Start-up, ${envName}, in a pod namespace routed into a sink, uid 65534, no capabilities; ${startup.runs} interleaved runs each`,
      `(median wall, mean CPU, peak RSS); load average ${startup.loadBefore} before, ${startup.loadAfter} after; ${machineLine(startup.machine)}:`,
      '',
      '| what | wall | CPU | peak RSS | against `node -e 0` (wall, CPU) | target |',
      '|---|---|---|---|---|---|',
    );
    for (const [name, figures] of Object.entries(rows)) {
      const target =
        name === 'snapshot'
          ? `<= ${startup.targetRatio}x: ${shipped.wallRatio <= startup.targetRatio ? 'met' : '**not met**'}`
          : '';
      lines.push(
        `| ${figures.label} | ${ms(figures.wallMs)} | ${ms(figures.cpuMs)} | ${figures.peakRssMiB.toFixed(1)} MiB | ${figures.wallRatio.toFixed(2)}x, ${figures.cpuRatio.toFixed(2)}x | ${target} |`,
      );
    }
    lines.push('', `The floor's built-ins: ${startup.builtins.join(', ')}.`);
  }
  if (storm) {
    const idle = storm.storms.find((entry) => entry.label === 'idle' && entry.build === 'start-up snapshot');
    if (idle) {
      if (lines.length) lines.push('');
      lines.push(
        `Boot storm: ${storm.pods} pods at once, every 10th unmeshed, --timeout ${s(storm.timeoutMs)}, each through \`ip netns exec\` and \`setpriv\`, idle, from the snapshot;`,
        `load average ${storm.loadBefore} before; ${machineLine(storm.machine)}:`,
        '',
        '| what | figure | target |',
        '|---|---|---|',
        `| slowest unmeshed verdict after launch | ${s(idle.slowestUnmeshedMs)} | <= ${s(storm.unmeshedVerdictTargetMs)}: ${idle.slowestUnmeshedMs <= storm.unmeshedVerdictTargetMs ? 'met' : '**not met**'} |`,
        `| meshed exit p50 after launch | ${s(idle.meshedExitP50Ms)} | <= ${s(storm.meshedExitP50TargetMs)}: ${idle.meshedExitP50Ms <= storm.meshedExitP50TargetMs ? 'met' : '**not met**'} |`,
        `| hangs, false failures, fail-open | ${idle.hangs}, ${idle.falseFailures}, ${idle.failOpen} | 0, 0, 0 |`,
        `| CPU per validator, p50 (schedstat) | ${idle.cpuP50Ms.toFixed(0)} ms | |`,
      );
    }
  }
  return lines;
}

const table = startupTable(read('startup.json'), read('storm-100.json'));
if (table.length === 0) {
  console.error(`bench-table: nothing in ${results}: run \`BENCH_ONLY=startup npm run bench\` first`);
  process.exit(1);
}
const file = option('--write');
if (!file) console.log(table.join('\n'));
else {
  const text = readFileSync(file, 'utf8');
  const [begin, end] = [text.indexOf(BEGIN), text.indexOf(END)];
  if (begin === -1 || end < begin) {
    console.error(`bench-table: ${file} has no ${BEGIN} ... ${END} markers`);
    process.exit(1);
  }
  writeFileSync(file, `${text.slice(0, begin + BEGIN.length)}\n${table.join('\n')}\n${text.slice(end)}`);
}
