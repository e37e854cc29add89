import { parsePortSet, type PortSet } from '../addr/port-set.js';

/** A port list a preset writes as text; a typo in a preset is a bug, so it throws at load. */
export function presetPorts(text: string): PortSet {
  const parsed = parsePortSet(text);
  if (!parsed.ok) throw new Error(`preset port list ${text}: ${parsed.error}`);
  return parsed.value;
}
