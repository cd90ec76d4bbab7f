import { callProvider } from './provider-call.ts';
import { backendName, type RemoteDeps } from './remote-deps.ts';

/** Time a probe may take, from connecting to the end of the answer. */
const probeTimeoutMs = 10_000; // 10 seconds

/**
 * Checks that a model server answers (a backend's probe, for its health): one GET of `url`,
 * no retry. Any answer below 500 but 408 and 429 is a server at work — a `404` for a route it
 * lacks, even a `401`, comes from a server that is up, and what it refuses shows in the runs.
 * Rejects with the reason otherwise (no answer, or an overloaded or failing server), naming
 * the origin for the operator.
 */
export async function probeServer(
  deps: RemoteDeps,
  engine: string,
  url: string,
  token: string | undefined,
  signal: AbortSignal,
): Promise<void> {
  const response = await callProvider(deps, {
    backend: backendName(engine, url),
    url,
    init: {
      method: 'GET',
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    },
    signal,
    connectTimeoutMs: probeTimeoutMs,
    callTimeoutMs: probeTimeoutMs,
    maxAttempts: 1,
  });
  await response.body?.cancel().catch(() => {});
  const { status } = response;
  if (status >= 500 || status === 408 || status === 429) {
    throw new Error(`${new URL(url).origin} answered the probe with HTTP ${status}`);
  }
}
