import type { Logger } from '../output/logger.js';
import type { ProbeHooks } from '../probe/probe-loop.js';

/** What the probe tells the logs while it runs: each answered attempt, and inbound strangers it ignores. */
export function probeLogHooks(logger: Logger): ProbeHooks {
  return {
    onAttempt: (target, attempt, outcome) =>
      logger.debug({ family: target.family, port: target.port, attempt, outcome: outcome.kind }, 'probe attempt'),
    onStranger: (stranger) =>
      logger.info(
        { port: stranger.listenerPort },
        `${stranger.sentence}; inbound traffic the mesh captures, ignored on the proxy-loopback path`,
      ),
  };
}
