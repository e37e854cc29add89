/** An output stream's error code (EPIPE, ENOSPC...), or undefined once the text has been handed to the OS. */
export function writeOutput(stream: NodeJS.WriteStream, text: string): Promise<string | undefined> {
  if (text === '') return Promise.resolve(undefined);
  return new Promise((resolve) => {
    // The callback fires once the bytes are written (or failed): exiting before it would cut a
    // piped report at the pipe's 64 KiB.
    stream.write(text, (error) => resolve(error ? ((error as NodeJS.ErrnoException).code ?? 'EIO') : undefined));
  });
}

/** An 'error' without a listener is an uncaught exception; write errors are reported by writeOutput's callback instead. */
export function quietStreamErrors(...streams: NodeJS.WriteStream[]): void {
  for (const stream of streams) if (stream.listenerCount('error') === 0) stream.on('error', () => undefined);
}
