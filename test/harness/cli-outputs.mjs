// Every printed answer of the CLI that takes no cluster, file or network: `interlock`, `help`,
// `help CMD`, `CMD --help`/`-h`, the completion scripts, and every refusal of a flag or variable
// (an unknown flag, a missing or bad value, a repeated flag, a bad INTERLOCK_* variable), as
// JSON lines on stdout: { argv, env, exitCode, stdout, stderr }. The cases come from the command
// table, so a flag added later is covered too. Run on the built CLI (dist/), inside a network
// namespace of its own (`unshare --net`): validate is among the commands, and none of them may
// reach the host's network even when refusing. Usage: unshare --net node test/harness/cli-outputs.mjs
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist');
const load = (file) => import(pathToFileURL(path.join(dist, file)).href);
process.setMaxListeners(0);
const { runCli } = await load('cli/run-cli.js');
const { COMMANDS } = await load('cli/command-table.js');
const { parseCommandLine } = await load('config/parse-command-line.js');

// A refused validate writes its termination message; here it goes to a file of the run's own.
const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-cli-outputs-'));
// On exit, however it comes: runCli's crash handler ends the process itself when a command throws.
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
// A bad --termination-log is a relative path: it lands there too.
const VALIDATE_ENV = { INTERLOCK_TERMINATION_LOG: path.join(scratch, 'termination-log') };
process.chdir(scratch);
const BAD = '\u0001bad';

function* cases() {
  yield { argv: [] };
  yield { argv: ['help'] };
  yield { argv: ['--help'] };
  yield { argv: ['help', 'help'] };
  yield { argv: ['help', '--help'] };
  yield { argv: ['help', 'manifest', '-h'] };
  // A value one edit from a choice is named back.
  yield { argv: ['manifest', '--mesh', 'linkrd'] };
  yield { argv: ['manifest', '--node-agent'] };
  yield { argv: ['help', 'no-such-command'] };
  yield { argv: ['help', 'validate', 'extra'] };
  yield { argv: ['no-such-command'] };
  yield { argv: ['completion'] };
  yield { argv: ['completion', 'tcsh'] };
  for (const spec of COMMANDS) yield* commandCases(spec);
}

function* commandCases(spec) {
  const name = spec.name;
  const lead = name === 'completion' ? ['bash'] : [];
  yield { argv: ['help', name] };
  yield { argv: [name, ...lead, '--help'] };
  yield { argv: [name, ...lead, '-h'] };
  yield { argv: [name, ...lead, '--no-such-flag'] };
  for (const shell of spec.positional ?? []) yield { argv: [name, shell] };
  for (const flag of spec.flags) {
    const option = `--${flag.name}`;
    if (flag.kind === 'switch') yield refused(spec, [...lead, `${option}=${BAD}`], {});
    else {
      yield refused(spec, [...lead, option], {});
      yield refused(spec, [...lead, `${option}=${BAD}`], {});
      yield refused(spec, [...lead, `${option}=`], {});
      if (!flag.repeatable) yield refused(spec, [...lead, option, BAD, option, BAD], {});
    }
    if (flag.env) yield refused(spec, lead, { [flag.env]: BAD });
  }
}

/** A case only when the command line is refused by the reader: an accepted one would run the command. */
function refused(spec, argv, env) {
  const flags = argv.filter((arg) => !(spec.positional ?? []).includes(arg));
  const parsed = parseCommandLine(spec.name, flags, env, spec.flags);
  return parsed.ok ? undefined : { argv: [spec.name, ...argv], env };
}

for (const item of cases()) {
  if (item === undefined) continue;
  const env = { ...(item.argv[0] === 'validate' ? VALIDATE_ENV : {}), ...item.env };
  for (const key of Object.keys(process.env)) if (key !== 'PATH') delete process.env[key];
  Object.assign(process.env, env);
  const outcome = await runCli(item.argv);
  const record = { argv: item.argv, env: item.env ?? {}, ...outcome };
  process.stdout.write(`${JSON.stringify(record)}\n`);
}
// runCli leaves its signal and crash handlers behind; the run is over.
process.exit(0);
