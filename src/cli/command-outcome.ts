/** What a command hands back to the composition root, which prints it and exits with the code. */
export interface CommandOutcome {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}
