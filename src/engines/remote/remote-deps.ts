import type { Clock } from '../../shared/clock.ts';

/**
 * What a remote engine (one that drives a model server over HTTP) needs from outside the
 * engines: its credentials, a careful fetch for the outputs a provider links to, a place to
 * report each call, and the probes that check outputs. Built by the composition root
 * (core.ts, through {@link createRemoteDeps}); engines import only domain/ and shared/.
 */
export interface RemoteDeps {
  /** The value of an environment variable a model's options name (`apiKeyEnv`); resolved by config at start. */
  secret(name: string): string | undefined;
  /**
   * Fetches a URL a provider returned for an output: only from `providerOrigin` itself or a
   * public https host (the CIMD address filter; the socket dials the checked address), at most
   * `maxBytes`, within `timeoutMs` (2 minutes when absent), aborted by `signal`. Throws a
   * {@link RemoteOutputError} with a readable reason otherwise.
   */
  fetchOutput(
    url: string,
    o: {
      providerOrigin: string;
      maxBytes: number;
      signal: AbortSignal;
      timeoutMs?: number;
      /**
       * `Authorization` for a URL on `providerOrigin` itself (Replicate's API serves files
       * there to its token only); never sent to any other host.
       */
      providerAuthorization?: string;
    },
  ): Promise<{ bytes: Buffer; contentType: string | null }>;
  /**
   * Records one call of a backend (for /metrics and /readyz): backend = `${engine} ${origin}`,
   * `status` the HTTP status it answered, or null when no answer came (it is unreachable).
   */
  observe(backend: string, outcome: 'ok' | 'failed', ms: number, status: number | null): void;
  /** Outputs are checked before they are stored: images decoded (sharp), audio/video probed (ffmpeg). */
  probe: {
    image(bytes: Buffer): Promise<{ format: string; width: number; height: number }>;
    media(
      bytes: Buffer,
      signal: AbortSignal,
    ): Promise<{ durationMs: number | null; hasVideo: boolean; hasAudio: boolean }>;
  };
  /** Time for `Retry-After` dates; the system clock when absent. */
  clock?: Clock;
  /**
   * Sends one HTTP exchange with a model server as a traced call: `send` gets the W3C trace
   * context headers (`traceparent`, `tracestate`) to add. Absent, or tracing off: no headers.
   */
  traceCall?: TraceCall;
}

/** See {@link RemoteDeps.traceCall}. */
export type TraceCall = <R extends { status: number }>(
  call: {
    readonly name: string;
    readonly method: string;
    readonly url: string;
    readonly attributes: Readonly<Record<string, string | number>>;
  },
  send: (headers: Record<string, string>) => Promise<R>,
) => Promise<R>;

/** An output a provider linked to that could not be fetched, or was not what it should be. */
export class RemoteOutputError extends Error {
  override readonly name = 'RemoteOutputError';
}

/** The backend label of a provider call: the engine and the origin it talks to (no path, no key). */
export function backendName(engine: string, baseUrl: string): string {
  return `${engine} ${new URL(baseUrl).origin}`;
}
