import { envNameOf, type FlagSpec } from '../config/flag-spec.js';

export function formatHelp(command: string, summary: string, flags: readonly FlagSpec[]): string {
  const rows = flags.map((flag) => {
    const usage = flag.arity === 'switch' ? `--${flag.name}` : flag.arity === 'optional' ? `--${flag.name}[=${flag.placeholder ?? 'VALUE'}]` : `--${flag.name} ${flag.placeholder ?? 'VALUE'}`;
    return { usage, help: flag.help, env: flag.name === 'help' || flag.name === 'version' ? '' : envNameOf(flag.name) };
  });
  const width = Math.max(...rows.map((row) => row.usage.length)) + 2;
  const lines = rows.map((row) => `  ${row.usage.padEnd(width)}${row.help}${row.env ? ` [${row.env}]` : ''}`);
  return `Usage: interlock ${command} [flags]\n\n${summary}\n\nFlags (flags win over the environment variables in brackets):\n${lines.join('\n')}\n`;
}

export const TOP_HELP = `Usage: interlock <command> [flags]

Commands:
  validate   Init container: prove the mesh intercepts this pod's traffic, or fail with the reason.
  explain    Offline: check saved iptables/nft dumps against the mesh configuration.

Run 'interlock <command> --help' for its flags. 'interlock --version' prints the version.
`;

export const VALIDATE_SUMMARY = `Proves, within --timeout, that the pod's network is set up and that a TCP connection the mesh
must capture arrives at the proxy's redirect port, for every address family the pod has; with
CAP_NET_ADMIN it also reads and checks the NAT rules. Exit 0 only on a proven pass.

Exit codes: 0 pass; the mesh failure code (linkerd 95, istio 126, generic 97, or
--failure-exit-code) when the pod is not meshed; 64 invalid configuration; 70 internal error;
130 SIGINT; 143 SIGTERM.`;
