/** Raised when the environment is invalid; its message is one line naming the variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** A URL with its password replaced, for messages and logs. */
export function maskUrlPassword(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*):[^@/?#]*@/i, "$1:***@");
}

/** "NAME=value: reason", with a secret's value left out (only its length shown) and a password in a URL masked. */
export function invalid(name: string, value: string, reason: string, options: { secret: boolean }): ConfigError {
  const shown = options.secret ? `${name} (value not shown, ${value.length} characters)` : `${name}=${JSON.stringify(maskUrlPassword(value))}`;
  return new ConfigError(`Invalid configuration: ${shown}: ${reason}`);
}

/** "NAME is required why": a setting that another one, as set, needs. */
export function required(name: string, why: string): ConfigError {
  return new ConfigError(`Invalid configuration: ${name} is required ${why}`);
}
