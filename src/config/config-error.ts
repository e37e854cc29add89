/** Invalid configuration: names the flag (or environment variable) and the value at fault. */
export interface ConfigError {
  readonly kind: 'config-error';
  readonly source: string;
  readonly value: string;
  readonly message: string;
}

export function configError(source: string, value: string, problem: string): ConfigError {
  return { kind: 'config-error', source, value, message: `${source}=${JSON.stringify(value)}: ${problem}` };
}

export function isConfigError(value: unknown): value is ConfigError {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'config-error';
}
