import { closeSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { formatIp, parseIp, type IpAddress } from '../addr/ip.js';
import { parseCommandLine } from '../config/parse-command-line.js';
import { buildValidateConfig, VALIDATE_FLAGS, type ValidateConfig } from '../config/validate-config.js';
import { assessPodNetwork } from '../network/assess-pod-network.js';
import { readPodNetwork } from '../netlink/read-pod-network.js';
import type { PodNetwork } from '../network/pod-network.js';
import { createLogger, type Logger } from '../output/logger.js';
import { planProbes, type ProbeTarget } from '../probe/probe-plan.js';
import { proveInterception } from '../probe/prove-interception.js';
import { readCapabilities } from '../rules/read/capabilities.js';
import { inspectLiveRules } from '../rules-check/inspect.js';
import { writeTerminationLog } from '../output/termination-log.js';
import { familyProbeCheck } from '../validate/probe-checks.js';
import { Progress } from '../validate/progress.js';
import type { InspectRules } from '../validate/rules-port.js';
import { runValidate } from '../validate/run-validate.js';
import { probeLogHooks } from '../validate/probe-log-hooks.js';
import { rulesCheck } from '../validate/rules-checks.js';
import { decideVerdict, isCertifiedPass } from '../verdict/decide-verdict.js';
import { formatTerminationMessage } from '../verdict/termination-message.js';
import { cannedRtNetlink } from './canned-rtnetlink.js';

/**
 * Runs once while the start-up snapshot is built, never in a pod: the validate pass path's own
 * code, on loopback and on a canned rtnetlink dump of a pod (`readCannedPod`: the snapshot's entry
 * reads it through netlink's real socket layers over a canned kernel, see canned-rtnetlink.ts). V8 compiles a function on its first
 * call, and what it compiled here is kept in the blob, so an init container does not spend its
 * first milliseconds compiling the flag parser, netlink's parsers, the planner, pino and
 * node:net's connect path (about 10 ms of CPU on the build machine).
 *
 * Nothing leaves loopback, and nothing it opens (the listener, the probe socket, a /dev/null
 * descriptor for the logs) outlives it: the snapshot is taken once the event loop is empty.
 * A rehearsal that does not pass fails the build, rather than shipping a slower blob unnoticed.
 */
export async function rehearseValidate(
  readCannedPod: () => Promise<PodNetwork> = () => readPodNetwork(() => Promise.resolve(cannedRtNetlink())),
): Promise<void> {
  const config = rehearsalConfig();
  const devNull = openSync('/dev/null', 'w');
  try {
    const logger = createLogger('json', 'debug', devNull);
    logger.info({ config: 'rehearsal' }, 'interlock validate starting');
    const network = await readCannedPod();
    if (!network.addresses.some((entry) => formatIp(entry.address) === '10.244.0.2'))
      throw new Error('snapshot rehearsal: the canned rtnetlink dump did not parse');
    const assessment = assessPodNetwork(network, config.family);
    const plan = planProbes({
      spec: config.interception,
      network,
      assessment,
      identity: { uid: 65534, gid: 65534, groups: [] },
      probeAddresses: {},
      probeAddressHints: {},
      probePort: undefined,
      randomPort: 40000,
      probeSpread: true,
      random: () => 0,
    });
    if (!plan.ok) throw new Error(`snapshot rehearsal: no probe plan for the canned pod: ${plan.error.message}`);
    logger.info({ targets: plan.targets, notes: plan.notes }, 'probing interception');
    const rules = await inspectRulesOffline(config.interception, {
      families: ['ipv4'],
      mode: 'auto',
      timeoutMs: 1000,
    });
    await rehearseLoopbackProbe(config, logger, rulesCheck(rules, config.rules));
    await rehearsePipeline(config, logger, readCannedPod);
  } finally {
    closeSync(devNull);
  }
}

/** The rules read as an unprivileged pod has it. The build runs as root: a rehearsal must never read (or need) the build machine's rules. */
const inspectRulesOffline: InspectRules = (spec, options) =>
  inspectLiveRules(spec, options, {
    readCapabilities: () => (readCapabilities() ? { netAdmin: false, netRaw: false } : undefined),
    readLiveRules: () => Promise.reject(new Error('a rehearsal reads no rules')),
    decideInspection: () => Promise.reject(new Error('a rehearsal decides no rules')),
  });

/**
 * validate's own pipeline (runValidate: the network read, the plan, rules and probe together,
 * the verdict) and the termination log, on the canned pod. Its probe sends nothing and answers
 * no target, so the run must end without a pass: a rehearsal that certified one would mean a
 * verdict without a proof, and fails the build.
 */
async function rehearsePipeline(
  config: ValidateConfig,
  logger: Logger,
  readCannedPod: () => Promise<PodNetwork>,
): Promise<void> {
  const verdict = await runValidate(config, {
    readPodNetwork: readCannedPod,
    inspectRules: inspectRulesOffline,
    identity: { uid: 65534, gid: 65534, groups: [], canSwitch: false },
    logger,
    signal: new AbortController().signal,
    deadline: performance.now() + config.timeoutMs,
    progress: new Progress(),
    proveInterception: () => Promise.resolve({ kind: 'probed', results: [] }),
  });
  if (isCertifiedPass(verdict)) throw new Error('snapshot rehearsal: a verdict passed without any proof');
  const log = join(tmpdir(), `interlock-rehearsal-${process.pid}.tl`);
  try {
    writeTerminationLog(log, formatTerminationMessage(verdict, ['config: rehearsal']), true);
  } finally {
    rmSync(log, { force: true });
  }
}

function rehearsalConfig(): ValidateConfig {
  const parsed = parseCommandLine(
    'validate',
    ['--mesh', 'linkerd', '--timeout', '5s', '--log-level', 'debug'],
    {},
    VALIDATE_FLAGS,
  );
  const config = parsed.ok ? buildValidateConfig(parsed.value) : parsed;
  if (!config.ok) throw new Error(`snapshot rehearsal: ${config.error.message}`);
  return config.value;
}

/** A probe straight into its own listener over loopback: no rule is involved, the code path is. */
async function rehearseLoopbackProbe(
  config: ValidateConfig,
  logger: Logger,
  rules: ReturnType<typeof rulesCheck>,
): Promise<void> {
  const port = await freeLoopbackPort();
  const target: ProbeTarget = {
    family: 'ipv4',
    path: 'outbound',
    destination: ip('127.0.0.1'),
    port,
    expectedPort: port,
    via: 'lo',
  };
  const started = performance.now();
  const run = await proveInterception(
    [target],
    { deadline: started + 2000, settleMs: 500, attemptTimeoutMs: 1000, launchIntervalMs: 1000 },
    new AbortController().signal,
    probeLogHooks(logger),
  );
  if (run.kind !== 'probed')
    throw new Error(`snapshot rehearsal: cannot listen on 127.0.0.1:${port}: ${run.error.code}`);
  const checks = [familyProbeCheck('ipv4', run.results, config.timeoutMs), rules];
  const proofs = run.results.flatMap((result) => (result.proof ? [result.proof] : []));
  const verdict = decideVerdict({
    checks,
    obligations: { families: ['ipv4'], targets: [target], rulesRequired: false },
    proofs,
  });
  logger.info(
    { verdict: verdict.outcome, reason: verdict.reason, durationMs: performance.now() - started, checks },
    verdict.message,
  );
  formatTerminationMessage(verdict, ['config: rehearsal']);
  if (!isCertifiedPass(verdict))
    throw new Error(`snapshot rehearsal: the loopback probe did not pass: ${verdict.message}`);
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function ip(text: string): IpAddress {
  const parsed = parseIp(text);
  if (!parsed) throw new Error(`snapshot rehearsal: bad address ${text}`);
  return parsed;
}
