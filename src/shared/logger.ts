/** The slice of a pino logger the core uses; injected, never imported from a global. */
export interface Logger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };
