import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  dumpOf,
  flushAll,
  isIpv6,
  loadIptablesGolden,
  loadNftGolden,
  type AmbientGolden,
  type IptablesBackend,
} from './goldens.js';

/** A bare network namespace of this test run's own: rules are loaded and dumped, no packet sent. */
export function makeNamespace(label: string): string {
  const name = `interlock-${label}-${process.pid}`;
  execFileSync('ip', ['netns', 'add', name]);
  execFileSync('ip', ['netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up']);
  return name;
}

export function removeNamespace(name: string): void {
  execFileSync('ip', ['netns', 'del', name]);
}

export type GoldenBackend = IptablesBackend | 'nftables';

export function backendsOf(golden: AmbientGolden): GoldenBackend[] {
  return golden.backend === 'nftables' ? ['nftables'] : ['nft', 'legacy'];
}

export interface GoldenDump {
  /** explain flags naming the dump files. */
  readonly files: string[];
  /** Lines the real tools refused (istio-cni 1.21-1.23 give `iptables` an IPv6 address). */
  readonly rejected: readonly string[];
}

/** Loads the golden with the backend, dumps it as an operator would, and writes the files to `dir`. */
export function dumpGolden(namespace: string, golden: AmbientGolden, backend: GoldenBackend, dir: string): GoldenDump {
  flushAll(namespace);
  const stem = path.join(dir, `${golden.tag}-${golden.backend}-${golden.name}-${backend}`);
  if (backend === 'nftables') {
    loadNftGolden(namespace, golden);
    const file = `${stem}.json`;
    writeFileSync(file, dumpOf(namespace, ['nft', '-j', 'list', 'ruleset']));
    return { files: [`--nft-ruleset=${file}`], rejected: [] };
  }
  const { rejected } = loadIptablesGolden(namespace, golden, backend);
  const flag = backend === 'nft' ? '' : '-legacy';
  const files = [`--iptables${flag}-save=${stem}.v4`];
  writeFileSync(`${stem}.v4`, dumpOf(namespace, [`iptables-${backend}-save`]));
  if (isIpv6(golden)) {
    writeFileSync(`${stem}.v6`, dumpOf(namespace, [`ip6tables-${backend}-save`]));
    files.push(`--ip6tables${flag}-save=${stem}.v6`);
  }
  return { files, rejected };
}
