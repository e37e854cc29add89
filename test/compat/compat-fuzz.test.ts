import { describe, expect, it } from 'vitest';
import { compatToValidate } from '../../src/compat/compat-argv.js';
import { VALIDATE_FLAGS } from '../../src/config/validate-config.js';
import { prng } from '../harness/prng.js';

const ISTIO_WORDS = [
  '-p',
  '-z',
  '-u',
  '-g',
  '-m',
  '-i',
  '-x',
  '-b',
  '-d',
  '-o',
  '-q',
  '-k',
  '-c',
  '-e',
  '-t',
  '-r',
  '-n',
  '--run-validation',
  '--skip-rule-apply',
  '--log_as_json',
  '--native-nftables',
  '--iptables-probe-port',
  '--probe-timeout',
  '--log_output_level=default:debug',
  '--capture-all-dns',
  '--drop-invalid',
  '--envoy-port',
  '--cleanup-only',
  '-Z',
  '--',
  '-p=15001',
  '--proxy-port=1',
];
const LINKERD_WORDS = [
  '--log-format',
  '--log-level',
  '--connect-addr',
  '--listen-addr',
  '--timeout',
  '--listen-addr=0.0.0.0:4140',
  '--connect-addr=[fd00::1]:20001',
  '--retries',
  '-v',
];
const VALUES = [
  '15001',
  '',
  '*',
  'REDIRECT',
  'TPROXY',
  '0.0.0.0:4140',
  '1.1.1.1:20001',
  '[::]:4140',
  'json',
  'plain',
  '10s',
  '1m30s',
  'x:y:z',
  '"',
  '\u0000',
  '99999',
  '-1',
  '10.0.0.0/8,fd00::/8',
];

/** Flags `interlock validate` knows. */
const KNOWN = new Set(VALIDATE_FLAGS.map((flag) => `--${flag.name}`));

describe('fuzz: whole drop-in command lines (seeded)', () => {
  it('never throw; map only onto flags validate knows; Istio never passes without both validation switches', () => {
    const random = prng(4242);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
    for (let round = 0; round < 3000; round++) {
      const istio = random() < 0.5;
      const words = istio ? ISTIO_WORDS : LINKERD_WORDS;
      const argv = [istio ? 'istio-iptables' : 'linkerd2-network-validator'];
      for (let index = 0; index < Math.floor(random() * 12); index++)
        argv.push(random() < 0.6 ? pick(words) : pick(VALUES));
      const mapped = compatToValidate(
        argv,
        random() < 0.3
          ? {
              IPTABLES_PROBE_PORT: pick(VALUES),
              PROBE_TIMEOUT: pick(VALUES),
              LINKERD_NETWORK_VALIDATOR_LOG_FORMAT: pick(VALUES),
            }
          : {},
      );
      expect(mapped, JSON.stringify(argv)).toBeDefined();
      if (!mapped?.ok) {
        expect(mapped?.error.reason).toBe('ConfigInvalid');
        continue;
      }
      expect(mapped.value.slice(0, 3)).toEqual(['validate', '--mesh', istio ? 'istio' : 'linkerd']);
      for (const flag of mapped.value.filter((arg) => arg.startsWith('--')))
        expect(KNOWN, `${flag} from ${JSON.stringify(argv)}`).toContain(flag.split('=')[0]);
      if (istio)
        expect(argv.includes('--run-validation') && argv.includes('--skip-rule-apply'), JSON.stringify(argv)).toBe(
          true,
        );
    }
  });
});
