import type { ColumnType, Generated } from 'kysely';
import type { GenerationKind } from '../domain/model.ts';

/** Kysely's view of the tables created by `migrations/`. Wire names stay snake_case. */
export interface Tables {
  accounts: AccountsTable;
  credit_balances: CreditBalancesTable;
  credit_ledger: CreditLedgerTable;
  api_keys: ApiKeysTable;
  contents: ContentsTable;
  tasks: TasksTable;
  media: MediaTable;
  server_secrets: ServerSecretsTable;
  identities: IdentitiesTable;
  idp_users: IdpUsersTable;
  idp_issuer: IdpIssuerTable;
  browser_sessions: BrowserSessionsTable;
  pending_authorizations: PendingAuthorizationsTable;
  oauth_codes: OauthCodesTable;
  oauth_tokens: OauthTokensTable;
  mcp_connections: McpConnectionsTable;
  elements: ElementsTable;
  avatars: AvatarsTable;
  rate_limits: RateLimitsTable;
  spending_limits: SpendingLimitsTable;
  spending_counters: SpendingCountersTable;
  task_events: TaskEventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  backends: BackendsTable;
  task_attempts: TaskAttemptsTable;
  audit_log: AuditLogTable;
  model_status: ModelStatusTable;
  model_catalogue: ModelCatalogueTable;
}

type CreatedAt = ColumnType<Date, Date | undefined, never>;

export interface AccountsTable {
  id: string;
  alias: string;
  status: 'active' | 'suspended' | 'deleted';
  role: 'user' | 'admin';
  api_key_access: boolean;
  created_at: CreatedAt;
}

export interface CreditBalancesTable {
  account_id: string;
  category: string;
  amount: number;
}

export interface CreditLedgerTable {
  id: string;
  account_id: string;
  category: string;
  /** Positive for grants and refunds, negative for debits; never zero. */
  delta: number;
  balance_after: number;
  reason: 'grant' | 'debit' | 'refund' | 'deduction';
  reference: string | null;
  seq: Generated<number>;
  created_at: CreatedAt;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  secret_hash: string;
  created_at: CreatedAt;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

export type TaskStatus = 'queued' | 'running' | 'finished';
export type MediaKind = 'image' | 'video' | 'audio';

export interface ContentsTable {
  id: string;
  account_id: string;
  kind: GenerationKind;
  model_id: string;
  /** The normalized input (defaults filled in, seed chosen), as the engine receives it. */
  input: ColumnType<unknown, string, string>;
  input_hash: string;
  idempotency_key: string | null;
  credits_charged: number;
  credits_refunded: Generated<number>;
  created_at: CreatedAt;
  /** The API key or MCP connection whose limits it was charged to (`spenderOf`), if any. */
  spender: string | null;
  spent_at: Date | null;
  /** Called when the task ends (issue 21), signed with the account's one-off webhook secret. */
  webhook_url: string | null;
  /** Set by `deleteContent`: its media is gone and every read of the account skips it. */
  deleted_at: Date | null;
}

export interface TasksTable {
  id: string;
  content_id: string;
  account_id: string;
  status: Generated<TaskStatus>;
  finish_code: number | null;
  finish_message: string | null;
  progress: Generated<number>;
  attempts: Generated<number>;
  max_attempts: number;
  lease_token: string | null;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  created_at: CreatedAt;
  started_at: Date | null;
  finished_at: Date | null;
  /** A remote engine's note kept across attempts (0009). */
  engine_checkpoint: Generated<string | null>;
  /** The pool it waits in: its content's model (0016). */
  model_id: string;
  /** Its place in the pool's fair order, set at submission (submission.store.ts). */
  fair_key: Generated<string>;
  /** The backend its run holds a slot on; of the last run once it stops. Null: no pool. */
  backend_id: Generated<string | null>;
  /** When the current (or last) run was claimed. */
  claimed_at: Generated<Date | null>;
  /** The backend whose job `engine_checkpoint` names. */
  checkpoint_backend_id: Generated<string | null>;
  /** The backend that last failed to take it: the next claim prefers another. */
  avoid_backend_id: Generated<string | null>;
  /** The W3C trace context of its submission (`traceparent`, `tracestate`); null untraced (0019). */
  trace_context: Generated<Record<string, string> | null>;
}

/** A backend of a model's pool, from the configuration, with its health (0016). */
export interface BackendsTable {
  id: string;
  model_id: string;
  name: string;
  engine: string;
  max_concurrent: number | null;
  priority: number;
  weight: number;
  state: Generated<'up' | 'down'>;
  /** Retryable failures in a row (runs and probes). */
  failures: Generated<number>;
  /** While down: when it is probed (or, without a probe, tried) again. */
  down_until: Generated<Date | null>;
  /** While up: when it is probed next. */
  next_probe_at: Generated<Date | null>;
  last_error: Generated<string | null>;
  changed_at: Generated<Date>;
}

/** One run of a task on a backend (0016). */
export interface TaskAttemptsTable {
  task_id: string;
  attempt: number;
  backend_id: string;
  started_at: Date;
  ended_at: Generated<Date>;
  /** ok, failed (the backend answered with a failure), failed_over, error, lost, stopped. */
  outcome: string;
  detail: string | null;
  /** The HTTP status of a model server's failed answer (0017). */
  provider_status: Generated<number | null>;
}

export interface MediaTable {
  id: string;
  account_id: string;
  content_id: string | null;
  position: number;
  kind: MediaKind;
  mime_type: string;
  bytes: number;
  width: number | null;
  height: number | null;
  duration_ms: number | null;
  storage_key: string;
  filename: string;
  created_at: CreatedAt;
  /** `pending` while an upload waits for its bytes and checks; only `ready` media is usable. */
  state: Generated<'pending' | 'ready'>;
  upload_expires_at: Date | null;
}

export interface ServerSecretsTable {
  name: string;
  value: string;
  created_at: CreatedAt;
}

export interface IdentitiesTable {
  issuer: string;
  subject: string;
  account_id: string;
  email: string | null;
  created_at: CreatedAt;
  last_seen_at: Date | null;
}

/** At most one row: the built-in identity provider's issuer for this data store. */
export interface IdpIssuerTable {
  one_row: Generated<boolean>;
  issuer: string;
  recorded_at: CreatedAt;
}

export interface IdpUsersTable {
  id: string;
  account_id: string;
  /** Lowercase. */
  email: string;
  /** argon2id, PHC string. */
  password_hash: string;
  created_at: CreatedAt;
}

export interface BrowserSessionsTable {
  id_hash: string;
  account_id: string | null;
  csrf_token: string;
  created_at: CreatedAt;
  last_active_at: Generated<Date>;
}

export interface PendingAuthorizationsTable {
  session_hash: string;
  client_id: string;
  redirect_uri: string;
  resource: string;
  scope: string;
  state: string;
  code_challenge: string;
  expires_at: Date;
}

export interface OauthCodesTable {
  code_hash: string;
  client_id: string;
  account_id: string;
  redirect_uri: string;
  resource: string;
  scope: string;
  code_challenge: string;
  created_at: CreatedAt;
  expires_at: Date;
  used_at: Date | null;
  /** Set when the connection's revocation ended the code unused (it is marked used too). */
  revoked_at: Date | null;
}

export interface OauthTokensTable {
  jti: string;
  client_id: string;
  account_id: string;
  scope: string;
  resource: string;
  code_hash: string;
  created_at: CreatedAt;
  expires_at: Date;
  revoked_at: Date | null;
}

export interface McpConnectionsTable {
  account_id: string;
  client_id: string;
  client_name: string | null;
  client_uri: string | null;
  logo_uri: string | null;
  scopes: string;
  connected_at: Generated<Date>;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export interface ElementsTable {
  id: string;
  account_id: string;
  kind: 'character' | 'object' | 'style' | 'scene';
  name: string;
  description: string | null;
  media_id: string;
  created_at: CreatedAt;
  deleted_at: Date | null;
}

export interface AvatarsTable {
  id: string;
  account_id: string;
  name: string;
  portrait_media_id: string;
  voice_model_id: string | null;
  created_at: CreatedAt;
  deleted_at: Date | null;
}

export interface RateLimitsTable {
  key: string;
  hits: number;
  reset_at: Date;
}

export interface SpendingLimitsTable {
  account_id: string;
  /** An API key's ID, or `mcp:` and an MCP client ID (`spenderOf`). */
  spender: string;
  /** `CreditLimit[]` */
  credits: ColumnType<unknown, string, string>;
  kinds: string[] | null;
  model_ids: string[] | null;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export interface SpendingCountersTable {
  account_id: string;
  spender: string;
  category: string;
  period: 'day' | 'month';
  period_start: Date;
  spent: number;
  cap: number;
}

/** Written by the `tasks_log_events` trigger only (migration 0013). */
export interface TaskEventsTable {
  seq: ColumnType<string, never, never>;
  tx: ColumnType<string, never, never>;
  at: ColumnType<Date, never, never>;
  account_id: string;
  task_id: string;
  content_id: string;
  status: TaskStatus;
  progress: number;
  finish_code: number | null;
  finish_message: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface WebhookEndpointsTable {
  id: string;
  account_id: string;
  url: string;
  description: Generated<string>;
  events: string[];
  /** Sealed with the server key `webhook-secrets`. */
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  enabled: Generated<boolean>;
  disabled_at: Date | null;
  disabled_reason: string | null;
  /** credits.low fires when a balance falls below this. */
  credits_low_below: Generated<number>;
  /** The account's secret for generations' own `webhookUrl`s (one per account, never listed). */
  one_off: Generated<boolean>;
  created_at: CreatedAt;
}

export interface WebhookDeliveriesTable {
  /** The `webhook-id`: the same on every attempt and replay. */
  id: string;
  account_id: string;
  endpoint_id: string;
  /** A generation's own webhookUrl, sent to instead of the endpoint's URL. */
  one_off_url: string | null;
  event_type: string;
  payload: ColumnType<unknown, string, string>;
  created_at: CreatedAt;
  state: Generated<'pending' | 'delivered' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: ColumnType<Date, Date | undefined, Date>;
  lease_until: Date | null;
  delivered_at: Date | null;
}

export interface WebhookAttemptsTable {
  id: Generated<string>;
  delivery_id: string;
  at: Date;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response_excerpt: string | null;
}

/** Append-only (0017): a trigger refuses UPDATE; retention deletes old rows. */
export interface AuditLogTable {
  seq: ColumnType<string, never, never>;
  at: Date;
  account_id: string | null;
  action: string;
  target: string | null;
  detail: ColumnType<unknown, string | null, never>;
  actor_account_id: string | null;
  actor_credential: string;
  actor_address: string | null;
}

/** A model's status set by an admin at runtime, over the configuration's (0017). */
export interface ModelStatusTable {
  model_id: string;
  status: 'ready' | 'maintenance' | 'deprecated';
  changed_at: Date;
}

/** One row: the catalogue the fleet last put in use (0017). */
export interface ModelCatalogueTable {
  id: boolean;
  models: ColumnType<unknown, string, string>;
  changed_at: Date;
}
