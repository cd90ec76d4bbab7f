/**
 * A Replicate prediction as the engine reads it (protocol doc, "Prediction object"): only the
 * fields it acts on, checked, because the body comes from the network.
 */
export interface Prediction {
  readonly id: string;
  readonly status: PredictionStatus;
  readonly output: unknown;
  readonly error: string | null;
  readonly logs: string;
  readonly dataRemoved: boolean;
  /** `urls.get` and `urls.cancel` when they point at the API's own origin; else built from the id. */
  readonly getUrl: string;
  readonly cancelUrl: string;
}

export type PredictionStatus =
  | 'starting'
  | 'processing'
  | 'succeeded'
  | 'failed'
  | 'canceled'
  | 'aborted';

const statuses: readonly PredictionStatus[] = [
  'starting',
  'processing',
  'succeeded',
  'failed',
  'canceled',
  'aborted',
];

/**
 * `aborted` (a deadline passed before it ran) is terminal too, though Replicate's own SDKs wait
 * on it forever (protocol doc, "Status semantics").
 */
export function isTerminal(status: PredictionStatus): boolean {
  return status !== 'starting' && status !== 'processing';
}

/**
 * Reads a prediction body, or null when it is not one. The URLs it gives are used only on the
 * API's origin: the token goes with every call, and a body is not trusted to send it elsewhere.
 */
export function readPrediction(body: unknown, baseUrl: string): Prediction | null {
  if (typeof body !== 'object' || body === null) return null;
  const p = body as Record<string, unknown>;
  if (typeof p.id !== 'string' || !/^[\w-]+$/.test(p.id)) return null;
  if (!statuses.includes(p.status as PredictionStatus)) return null;
  const urls = (typeof p.urls === 'object' && p.urls !== null ? p.urls : {}) as Record<
    string,
    unknown
  >;
  const origin = new URL(baseUrl).origin;
  const own = (value: unknown, fallback: string): string =>
    typeof value === 'string' && URL.canParse(value) && new URL(value).origin === origin
      ? value
      : fallback;
  const getUrl = own(urls.get, `${baseUrl}/predictions/${p.id}`);
  return {
    id: p.id,
    status: p.status as PredictionStatus,
    output: p.output ?? null,
    error: typeof p.error === 'string' && p.error !== '' ? p.error : null,
    logs: typeof p.logs === 'string' ? p.logs : '',
    dataRemoved: p.data_removed === true,
    getUrl,
    cancelUrl: own(urls.cancel, `${getUrl}/cancel`),
  };
}

/**
 * Progress from a running prediction's logs, best effort: models commonly print progress bars
 * (`45%|████▌     | 9/20`), so the last percentage printed counts. Kept below 1, which the
 * finished task reports; null when the logs say nothing.
 */
export function progressOf(prediction: Prediction): number | null {
  if (prediction.status === 'starting') return 0;
  const percentages = [...prediction.logs.matchAll(/(\d{1,3})\s*%/g)]
    .map((match) => Number(match[1]))
    .filter((value) => value <= 100);
  const last = percentages.at(-1);
  return last === undefined ? null : Math.min(0.95, last / 100);
}
