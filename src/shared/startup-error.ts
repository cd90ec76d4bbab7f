/**
 * A start (or an operator command) that cannot go on for a reason the operator fixes outside
 * Atelier: a port in use, a database that cannot be reached or that a newer release migrated.
 * The command line prints its message alone, without a stack, and exits 1 (docs/troubleshooting.md).
 */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** A listener that could not bind: the address in use (or not ours to take) said in words. */
export function listenFailure(
  error: unknown,
  host: string,
  port: number,
  setting: string,
): unknown {
  const code = (error as { code?: string }).code;
  if (code === 'EADDRINUSE')
    return new StartupError(
      `${host}:${port} is in use by another process (an Atelier still running?): stop it, or set ${setting} to a free port.`,
      { cause: error },
    );
  if (code === 'EACCES' || code === 'EADDRNOTAVAIL')
    return new StartupError(
      `Cannot listen on ${host}:${port} (${code}): choose another ${setting}, or a host this machine has.`,
      { cause: error },
    );
  return error;
}
