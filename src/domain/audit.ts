import type { Actor } from './actor.ts';

/**
 * What the audit log records (issue 32 §3): every credential and money event, and every
 * operator action. The names are stable: scripts filter on them.
 */
export const auditActions = [
  'account.created',
  'account.updated',
  'credits.granted',
  'credits.deducted',
  'api_key.created',
  'api_key.revoked',
  'api_key.limits_changed',
  'mcp.consented',
  'mcp.revoked',
  'mcp.limits_changed',
  'webhook.endpoint_created',
  'webhook.endpoint_updated',
  'webhook.endpoint_deleted',
  'webhook.secret_rotated',
  'idp.user_added',
  'oauth.signing_key_rotated',
  'model.status_changed',
  'models.reloaded',
] as const;

export type AuditAction = (typeof auditActions)[number];

/** Who acted: an account through one of its credentials, or an operator at the command line. */
export interface AuditActor {
  /** The acting account; null for the command line. */
  readonly accountId: string | null;
  /**
   * The credential, spelled `api_key:<id>`, `id_token:<issuer>#<subject>`, `mcp:<client>`,
   * `browser_session` (the consent page), `cli` or `signal` (SIGHUP).
   */
  readonly credential: string;
  /** The request's address, where there was a request. */
  readonly address: string | null;
}

/** One event, as a service records it. */
export interface AuditEvent {
  /** The account it concerns; null for events of the whole service (a model, a signing key). */
  readonly accountId: string | null;
  readonly action: AuditAction;
  /** What it concerns inside that account: a key, an endpoint, a client, a model. */
  readonly target: string | null;
  /** What changed, never a secret. */
  readonly detail: Readonly<Record<string, unknown>> | null;
}

/** The command line: an operator on the host, outside any account. */
export const commandLine: AuditActor = { accountId: null, credential: 'cli', address: null };

/** A signal to the process (SIGHUP): an operator on the host, too. */
export const hangUpSignal: AuditActor = { accountId: null, credential: 'signal', address: null };

/** The audit spelling of an authenticated caller. */
export function auditActorOf(actor: Actor): AuditActor {
  return {
    accountId: actor.accountId,
    credential: credentialName(actor),
    address: actor.address ?? null,
  };
}

function credentialName(actor: Actor): string {
  const credential = actor.credential;
  switch (credential.kind) {
    case 'api_key':
      return `api_key:${credential.apiKeyId}`;
    case 'id_token':
      return `id_token:${credential.issuer}#${credential.subject}`;
    case 'mcp_token':
      return `mcp:${credential.clientId}`;
  }
}

/**
 * An entry as the account it concerns reads it: another account's acting credential (an
 * operator's key) is that operator's business, so it reads `operator`; who and when stay.
 */
export function asSeenByOwner<T extends { actor: AuditActor }>(entry: T, readerId: string): T {
  if (entry.actor.accountId === readerId) return entry;
  return { ...entry, actor: { accountId: null, credential: 'operator', address: null } };
}
