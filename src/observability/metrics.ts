import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { kindNames } from '../domain/kinds/kinds.ts';
import type { GenerationKind } from '../domain/model.ts';
import type { PoolReport } from './pool-report.ts';

export type GraphqlOperationType = 'query' | 'mutation' | 'subscription';
export type CreditReason = 'debit' | 'refund' | 'grant' | 'deduction';

/** One category's share of a committed balance change; `amount` is positive whatever the reason. */
export interface CreditAmount {
  readonly category: string;
  readonly amount: number;
}

/** Unfinished tasks of one kind and status, read at scrape time. */
export interface QueueSnapshotRow {
  readonly kind: GenerationKind;
  readonly status: 'queued' | 'running';
  readonly tasks: number;
  /** Seconds since the oldest of these tasks was submitted. */
  readonly oldestAgeSeconds: number;
}

/**
 * What the service measures about itself. Callers record facts after they happened (a response
 * sent, a transaction committed); the implementation decides how they are exposed. Components
 * take it as an optional dependency: without one they record nothing and run no extra query.
 */
export interface Metrics {
  /** One answered HTTP request; `route` is the route's pattern, never the raw URL. */
  observeHttp(request: {
    method: string;
    route: string;
    statusCode: number;
    seconds: number;
  }): void;
  countGraphqlOperation(type: GraphqlOperationType, outcome: 'ok' | 'error'): void;
  /** A task a worker (or the lost-task sweep) finished; `seconds` from first claim to finish. */
  observeTaskFinished(modelId: string, finishCode: number, seconds: number): void;
  /** Balance changes of one reason, counted once their transaction has committed. */
  countCredits(reason: CreditReason, amounts: readonly CreditAmount[]): void;
  /** One HTTP call of a model server (every attempt); `backend` is `${engine} ${origin}`. */
  /** `status`: the HTTP status answered, or null when no answer came (label `none`). */
  observeBackendCall(
    backend: string,
    outcome: 'ok' | 'failed',
    status: number | null,
    seconds: number,
  ): void;
  /** Prometheus text exposition format (`contentType`). */
  render(): Promise<string>;
  readonly contentType: string;
}

const kinds: readonly GenerationKind[] = kindNames;
const queueStatuses = ['queued', 'running'] as const;
/** Generations take from under a second (fakes, speech) to many minutes (video). */
const taskBuckets = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

/**
 * Metrics in a registry of their own (never prom-client's global one: tests run several apps
 * in one process), with Node's process metrics. Queue gauges are read from the database at
 * scrape time, by `queue` — one query for both gauges of a scrape.
 */
export class PrometheusMetrics implements Metrics {
  readonly #registry = new Registry();
  readonly #queue: () => Promise<readonly QueueSnapshotRow[]>;
  #snapshot: Promise<readonly QueueSnapshotRow[]> | undefined;
  readonly #http: Histogram<'method' | 'route' | 'status_code'>;
  readonly #graphql: Counter<'operation_type' | 'outcome'>;
  readonly #tasks: Histogram<'model_id' | 'finish_code'>;
  readonly #credits: Counter<'category' | 'reason'>;
  readonly #backends: Histogram<'backend' | 'outcome' | 'status'>;

  constructor(options: {
    queue: () => Promise<readonly QueueSnapshotRow[]>;
    /** The pools' backends, read at scrape time; none when absent. */
    pools?: () => Promise<readonly PoolReport[]>;
  }) {
    this.#queue = options.queue;
    const registers = [this.#registry];
    collectDefaultMetrics({ register: this.#registry });
    this.#http = new Histogram({
      name: 'atelier_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern (not_found when none matched) and status.',
      labelNames: ['method', 'route', 'status_code'],
      registers,
    });
    this.#graphql = new Counter({
      name: 'atelier_graphql_operations_total',
      help: 'GraphQL operations executed over HTTP, by operation type and outcome.',
      labelNames: ['operation_type', 'outcome'],
      registers,
    });
    this.#tasks = new Histogram({
      name: 'atelier_task_duration_seconds',
      help: 'Tasks finished by workers, from first claim to finish, by model and finish code.',
      labelNames: ['model_id', 'finish_code'],
      buckets: taskBuckets,
      registers,
    });
    this.#credits = new Counter({
      name: 'atelier_credits_total',
      help: 'Credits moved by committed balance changes, by category and reason.',
      labelNames: ['category', 'reason'],
      registers,
    });
    this.#backends = new Histogram({
      name: 'atelier_backend_call_duration_seconds',
      help: 'Calls of model servers (each attempt), by backend (engine and origin), outcome and HTTP status (none: no answer).',
      labelNames: ['backend', 'outcome', 'status'],
      buckets: taskBuckets,
      registers,
    });
    const snapshot = () => this.#queueSnapshot();
    new Gauge({
      name: 'atelier_queue_depth',
      help: 'Unfinished tasks by kind and status, read from the database at scrape time.',
      labelNames: ['kind', 'status'],
      registers,
      async collect() {
        const rows = await snapshot();
        this.reset();
        for (const kind of kinds) {
          for (const status of queueStatuses) {
            const row = rows.find((r) => r.kind === kind && r.status === status);
            this.set({ kind, status }, row?.tasks ?? 0);
          }
        }
      },
    });
    new Gauge({
      name: 'atelier_queue_oldest_age_seconds',
      help: 'Seconds the oldest queued (not yet claimed) task of each kind has waited; 0 when none.',
      labelNames: ['kind'],
      registers,
      async collect() {
        const rows = await snapshot();
        this.reset();
        for (const kind of kinds) {
          const row = rows.find((r) => r.kind === kind && r.status === 'queued');
          this.set({ kind }, row?.oldestAgeSeconds ?? 0);
        }
      },
    });
    if (options.pools !== undefined) this.#poolGauges(options.pools);
  }

  get contentType(): string {
    return this.#registry.contentType;
  }

  observeHttp(request: { method: string; route: string; statusCode: number; seconds: number }) {
    this.#http.observe(
      { method: request.method, route: request.route, status_code: String(request.statusCode) },
      request.seconds,
    );
  }

  countGraphqlOperation(type: GraphqlOperationType, outcome: 'ok' | 'error'): void {
    this.#graphql.inc({ operation_type: type, outcome });
  }

  observeTaskFinished(modelId: string, finishCode: number, seconds: number): void {
    this.#tasks.observe({ model_id: modelId, finish_code: String(finishCode) }, seconds);
  }

  countCredits(reason: CreditReason, amounts: readonly CreditAmount[]): void {
    for (const { category, amount } of amounts) {
      if (amount > 0) this.#credits.inc({ category, reason }, amount);
    }
  }

  observeBackendCall(
    backend: string,
    outcome: 'ok' | 'failed',
    status: number | null,
    seconds: number,
  ): void {
    this.#backends.observe(
      { backend, outcome, status: status === null ? 'none' : String(status) },
      seconds,
    );
  }

  render(): Promise<string> {
    return this.#registry.metrics();
  }

  /**
   * Each backend's state, runs in flight and cap, and each pool's queue, by model and backend
   * name: one read of the database per scrape, shared by the four gauges.
   */
  #poolGauges(read: () => Promise<readonly PoolReport[]>): void {
    const registers = [this.#registry];
    let pending: Promise<readonly PoolReport[]> | undefined;
    const pools = () => {
      if (pending === undefined) {
        const current = read();
        pending = current;
        const clear = () => {
          if (pending === current) pending = undefined;
        };
        current.then(clear, clear);
      }
      return pending;
    };
    const perBackend = (
      name: string,
      help: string,
      value: (b: PoolReport['backends'][number]) => number | null,
    ) =>
      new Gauge({
        name,
        help,
        labelNames: ['model_id', 'backend'],
        registers,
        async collect() {
          const reports = await pools();
          this.reset();
          for (const pool of reports) {
            for (const b of pool.backends) {
              const v = value(b);
              if (v !== null) this.set({ model_id: pool.modelId, backend: b.name }, v);
            }
          }
        },
      });
    perBackend(
      'atelier_backend_up',
      'Whether a backend of a pool is in rotation (1) or out until its probe answers (0).',
      (b) => (b.state === 'up' ? 1 : 0),
    );
    perBackend(
      'atelier_backend_in_flight',
      'Runs holding a slot of a backend now, across every worker (read from the database).',
      (b) => b.inFlight,
    );
    perBackend(
      'atelier_backend_capacity',
      'A backend’s cap on runs at once (maxConcurrent); absent when unlimited.',
      (b) => b.maxConcurrent,
    );
    new Gauge({
      name: 'atelier_pool_queued',
      help: "Tasks waiting in Atelier's queue for a slot of a model's pool.",
      labelNames: ['model_id'],
      registers,
      async collect() {
        const reports = await pools();
        this.reset();
        for (const pool of reports) this.set({ model_id: pool.modelId }, pool.queued);
      },
    });
  }

  /**
   * The registry collects every metric at once, so both queue gauges ask while the first query
   * is in flight and share it; the next scrape reads afresh.
   */
  #queueSnapshot(): Promise<readonly QueueSnapshotRow[]> {
    if (this.#snapshot === undefined) {
      const pending = this.#queue();
      this.#snapshot = pending;
      const clear = () => {
        if (this.#snapshot === pending) this.#snapshot = undefined;
      };
      pending.then(clear, clear);
    }
    return this.#snapshot;
  }
}
