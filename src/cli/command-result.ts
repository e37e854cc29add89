/** What a command hands back to the composition root, which prints it and exits. */
export interface CommandResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}
