// The image's command, /opt/interlock/bin/interlock: node started from the start-up snapshot.
//
// The blob deserialises only under the exact V8 flags it was built with
// (scripts/node-runtime-flags.json, today `--max-old-space-size=192 --max-semi-space-size=2`): any other heap flag and node
// refuses the snapshot. `--` ends node's own options, so every word the user gives (`--version`,
// `--mesh linkerd`) reaches Interlock's CLI instead of node's option parser.
export function launcherScript(nodeFlags, blobPath) {
  return [
    '#!/bin/sh',
    "# Interlock's CLI lives in the start-up snapshot; exec keeps node as the container's PID 1.",
    `# The snapshot loads only with these exact V8 flags (${nodeFlags}); \`--\` hands every user word to the CLI.`,
    `exec node ${nodeFlags} --snapshot-blob ${blobPath} -- "$@"`,
    '',
  ].join('\n');
}
