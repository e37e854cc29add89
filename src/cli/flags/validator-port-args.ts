import { INBOUND_PORT_FLAG, OUTBOUND_PORT_FLAG } from '../../config/interception-flags.js';
import { flagValue, type ParsedFlags } from '../../config/parsed-flags.js';

/** validate's port flags, as manifest and inject pass them on to the validator they print. */
export function validatorPortArgs(parsed: ParsedFlags): string[] {
  return [INBOUND_PORT_FLAG, OUTBOUND_PORT_FLAG].flatMap((flag) => {
    const port = flagValue(parsed, flag);
    return port === undefined ? [] : [`--${flag.name}`, String(port)];
  });
}
