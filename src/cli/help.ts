import { EXIT } from '../config/exit-codes.js';
import type { CommandName, FlagDef } from '../config/flag-def.js';

/** `--inbound-port PORT` or `--tproxy`: how a flag is written on a command line. */
export function flagUsage(flag: FlagDef): string {
  return flag.kind === 'switch' ? `--${flag.name}` : `--${flag.name} ${flag.placeholder ?? 'VALUE'}`;
}

/** A command's --help, generated from the same FlagDefs its parser reads. */
export function formatHelp(command: CommandName, summary: string, flags: readonly FlagDef[]): string {
  const rows = flags
    .filter((flag) => flag.commands.includes(command))
    .map((flag) => ({ usage: flagUsage(flag), help: flag.help.replace(/`/g, ''), env: flag.env ?? '' }));
  const width = Math.max(...rows.map((row) => row.usage.length)) + 2;
  const lines = rows.map((row) => `  ${row.usage.padEnd(width)}${row.help}${row.env ? ` [${row.env}]` : ''}`);
  return `Usage: interlock ${command} [flags]\n\n${summary}\n\nFlags (a flag wins over the environment variable in brackets):\n${lines.join('\n')}\n`;
}

export const TOP_HELP = `Usage: interlock <command> [flags]

Commands:
  validate   Init container: prove the mesh intercepts this pod's traffic, or fail with the reason.
  explain    Offline: check saved iptables/nft dumps against the mesh configuration.
  manifest   Print the init container (or, with --node-agent, the node agent) for a mesh.
  inject     Add the validator to every pod template of Kubernetes YAML (-f FILE or stdin).
  node       Node agent: recreate pods the CNI failed, without ever looping; audit the CNI config.
  cni-check  Predict which CNI configuration the runtime loads and check the mesh plugin is chained.
  webhook    Admission webhook: put Interlock in place of the mesh's validator as pods are created.

Run 'interlock <command> --help' for its flags. 'interlock --version' prints the version.
`;

export const VALIDATE_SUMMARY = `Proves, within --timeout, that the pod's network is set up and that a TCP connection the mesh
must capture arrives at the proxy's redirect port, for every address family the pod has; with
CAP_NET_ADMIN it also reads and checks the NAT rules. Exit 0 only on a proven pass.

Exit codes: ${EXIT.pass} pass; the mesh failure code (linkerd 95, istio 126, generic 97, or
--failure-exit-code) when the pod is not meshed; ${EXIT.invalidConfig} invalid configuration; ${EXIT.internalError} internal error;
${EXIT.outputError} output error; ${EXIT.sigint} SIGINT; ${EXIT.sigterm} SIGTERM.`;

export const EXPLAIN_SUMMARY = `Runs the rules analysis of 'interlock validate' on saved dumps: every region of packets the
configuration speaks of, where the rules send every packet of it, and which rule decided. Dumps are regular files,
at most 16 MiB in all.

Exit codes: ${EXIT.pass} every expectation holds; the mesh failure code when one fails or cannot be decided;
${EXIT.invalidConfig} bad flags; ${EXIT.dataError} a dump does not parse or is too large; ${EXIT.noInput} a file cannot be read; ${EXIT.internalError} internal
error; ${EXIT.outputError} output error.`;
