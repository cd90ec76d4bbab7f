import { type Selectable, sql, type Transaction } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { Db, Queryable } from './database.ts';
import { prepared } from './prepared.ts';
import type {
  BrowserSessionsTable,
  McpConnectionsTable,
  OauthCodesTable,
  PendingAuthorizationsTable,
  Tables,
} from './schema.ts';

export type BrowserSessionRow = Selectable<BrowserSessionsTable>;
export type PendingAuthorizationRow = Selectable<PendingAuthorizationsTable>;
export type OauthCodeRow = Selectable<OauthCodesTable>;
export type McpConnectionRow = Selectable<McpConnectionsTable>;

// ---- browser sessions ----

export async function insertSession(
  q: Queryable,
  row: { idHash: string; accountId: string | null; csrfToken: string },
) {
  await q
    .insertInto('browser_sessions')
    .values({ id_hash: row.idHash, account_id: row.accountId, csrf_token: row.csrfToken })
    .execute();
}

/** How long a browser session lives: idle for `idleMs`, or `maxAgeMs` after it began. */
export interface SessionLifetime {
  readonly idleMs: number;
  readonly maxAgeMs: number;
}

const ago = (ms: number) => sql<Date>`now() - ${ms} * interval '1 millisecond'`;

/** A session still alive; touching it extends the inactivity window (never the absolute one). */
export async function touchSession(
  q: Queryable,
  idHash: string,
  lifetime: SessionLifetime,
): Promise<BrowserSessionRow | undefined> {
  return q
    .updateTable('browser_sessions')
    .set({ last_active_at: sql<Date>`now()` })
    .where('id_hash', '=', idHash)
    .where('last_active_at', '>', ago(lifetime.idleMs))
    .where('created_at', '>', ago(lifetime.maxAgeMs))
    .returningAll()
    .executeTakeFirst();
}

/**
 * Forgets what can no longer be used: ended sessions (their pending authorizations go with
 * them), expired pending authorizations, unused expired codes and expired tokens. A used code
 * stays until `usedCodeRetentionMs` after its use (the lifetime of the token it gave), so a
 * late replay still revokes that token (RFC 9700 §4.5).
 */
export async function deleteExpiredAuthorizationState(
  db: Db,
  lifetime: SessionLifetime & { readonly usedCodeRetentionMs: number },
): Promise<{ sessions: number; pending: number; codes: number; tokens: number }> {
  const count = (result: { numDeletedRows: bigint }) => Number(result.numDeletedRows);
  return db.transaction().execute(async (trx) => ({
    sessions: count(
      await trx
        .deleteFrom('browser_sessions')
        .where((eb) =>
          eb.or([
            eb('last_active_at', '<=', ago(lifetime.idleMs)),
            eb('created_at', '<=', ago(lifetime.maxAgeMs)),
          ]),
        )
        .executeTakeFirst(),
    ),
    pending: count(
      await trx
        .deleteFrom('pending_authorizations')
        .where('expires_at', '<=', sql<Date>`now()`)
        .executeTakeFirst(),
    ),
    codes: count(
      await trx
        .deleteFrom('oauth_codes')
        .where((eb) =>
          eb.or([
            eb.and([eb('used_at', 'is', null), eb('expires_at', '<=', sql<Date>`now()`)]),
            eb('used_at', '<=', ago(lifetime.usedCodeRetentionMs)),
          ]),
        )
        .executeTakeFirst(),
    ),
    tokens: count(
      await trx
        .deleteFrom('oauth_tokens')
        .where('expires_at', '<=', sql<Date>`now()`)
        .executeTakeFirst(),
    ),
  }));
}

export async function deleteSession(q: Queryable, idHash: string): Promise<void> {
  await q.deleteFrom('browser_sessions').where('id_hash', '=', idHash).execute();
}

/** Replaces a session by a new id (sign-in), carrying its pending authorization over. */
export async function rotateSession(
  db: Db,
  from: string,
  to: { idHash: string; accountId: string; csrfToken: string },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await insertSession(trx, to);
    await trx
      .updateTable('pending_authorizations')
      .set({ session_hash: to.idHash })
      .where('session_hash', '=', from)
      .execute();
    await deleteSession(trx, from);
  });
}

// ---- pending authorizations ----

/**
 * Remembers the session's authorization request for `lifetimeMs`. The expiry is computed by
 * the database because it is compared there (`findPendingAuthorization`): one clock for both.
 */
export async function putPendingAuthorization(
  q: Queryable,
  pending: Omit<PendingAuthorizationRow, 'expires_at'> & { lifetimeMs: number },
): Promise<void> {
  const { lifetimeMs, ...rest } = pending;
  const row = { ...rest, expires_at: sql<Date>`now() + ${lifetimeMs} * interval '1 millisecond'` };
  await q
    .insertInto('pending_authorizations')
    .values(row)
    .onConflict((oc) => oc.column('session_hash').doUpdateSet(row))
    .execute();
}

/** The session's pending authorization, if it has not expired. */
export async function findPendingAuthorization(
  q: Queryable,
  sessionHash: string,
): Promise<PendingAuthorizationRow | undefined> {
  return q
    .selectFrom('pending_authorizations')
    .selectAll()
    .where('session_hash', '=', sessionHash)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
}

export async function deletePendingAuthorization(q: Queryable, sessionHash: string): Promise<void> {
  await q.deleteFrom('pending_authorizations').where('session_hash', '=', sessionHash).execute();
}

// ---- codes and tokens ----

export async function insertCode(
  q: Queryable,
  row: Omit<OauthCodeRow, 'created_at' | 'used_at' | 'revoked_at'>,
): Promise<void> {
  await q.insertInto('oauth_codes').values(row).execute();
}

/**
 * The code, its row locked until the transaction ends: concurrent redemptions and replays of
 * one code take turns, each seeing what the one before it committed.
 */
export async function lockCode(q: Queryable, codeHash: string): Promise<OauthCodeRow | undefined> {
  return q
    .selectFrom('oauth_codes')
    .selectAll()
    .where('code_hash', '=', codeHash)
    .forUpdate()
    .executeTakeFirst();
}

export async function markCodeUsed(q: Queryable, codeHash: string): Promise<void> {
  await q
    .updateTable('oauth_codes')
    .set({ used_at: sql<Date>`now()` })
    .where('code_hash', '=', codeHash)
    .execute();
}

export async function insertToken(
  q: Queryable,
  row: {
    jti: string;
    clientId: string;
    accountId: string;
    scope: string;
    resource: string;
    codeHash: string;
    expiresAt: Date;
  },
): Promise<void> {
  await q
    .insertInto('oauth_tokens')
    .values({
      jti: row.jti,
      client_id: row.clientId,
      account_id: row.accountId,
      scope: row.scope,
      resource: row.resource,
      code_hash: row.codeHash,
      expires_at: row.expiresAt,
    })
    .execute();
}

export async function revokeTokensOfCode(q: Queryable, codeHash: string): Promise<void> {
  await q
    .updateTable('oauth_tokens')
    .set({ revoked_at: sql<Date>`now()` })
    .where('code_hash', '=', codeHash)
    .where('revoked_at', 'is', null)
    .execute();
}

const liveTokenWithAccount = prepared(
  (db, jti: string) =>
    db
      .selectFrom('oauth_tokens')
      .leftJoin('accounts', 'accounts.id', 'oauth_tokens.account_id')
      .select([
        'oauth_tokens.jti',
        'oauth_tokens.account_id',
        'oauth_tokens.client_id',
        'oauth_tokens.scope',
        'oauth_tokens.revoked_at',
        'oauth_tokens.expires_at',
        'accounts.status as account_status',
        'accounts.role as account_role',
        'accounts.alias as account_alias',
      ])
      .select((eb) =>
        jsonArrayFrom(
          eb
            .selectFrom('credit_balances')
            .select(['category', 'amount'])
            .whereRef('credit_balances.account_id', '=', 'oauth_tokens.account_id')
            .orderBy('category'),
        ).as('balances'),
      )
      .where('oauth_tokens.jti', '=', jti),
  'placeholder:jti',
);

/**
 * The stored token by `jti`, revoked or expired too (the caller judges its expiry on the clock
 * that stamped it, the application's), with its account's status, role and alias (null when the account row is gone) and its balances by category:
 * everything an MCP request checks, and what `get_account` answers, in one round trip,
 * compiled once ({@link prepared}).
 */
export async function findTokenWithAccount(q: Queryable, jti: string) {
  return (await liveTokenWithAccount(q, jti))[0];
}

// ---- connections (consents) ----

export async function upsertConnection(
  q: Queryable,
  row: {
    accountId: string;
    clientId: string;
    clientName: string | null;
    clientUri: string | null;
    logoUri: string | null;
    scopes: string;
  },
): Promise<void> {
  const values = {
    account_id: row.accountId,
    client_id: row.clientId,
    client_name: row.clientName,
    client_uri: row.clientUri,
    logo_uri: row.logoUri,
    scopes: row.scopes,
  };
  await q
    .insertInto('mcp_connections')
    .values(values)
    .onConflict((oc) =>
      oc.columns(['account_id', 'client_id']).doUpdateSet({
        ...values,
        connected_at: sql<Date>`now()`,
        revoked_at: null,
      }),
    )
    .execute();
}

export async function listConnections(
  q: Queryable,
  accountId: string,
): Promise<McpConnectionRow[]> {
  return q
    .selectFrom('mcp_connections')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .orderBy('connected_at', 'desc')
    .execute();
}

/**
 * Removes a consent, its live tokens and its unused codes. Run it in a transaction (the caller's,
 * which also records the revocation): the three stand or fall together.
 */
export async function revokeConnection(
  trx: Transaction<Tables>,
  accountId: string,
  clientId: string,
): Promise<McpConnectionRow | undefined> {
  const connection = await trx
    .updateTable('mcp_connections')
    .set({ revoked_at: sql<Date>`now()` })
    .where('account_id', '=', accountId)
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (connection === undefined) return undefined;
  await trx
    .updateTable('oauth_tokens')
    .set({ revoked_at: sql<Date>`now()` })
    .where('account_id', '=', accountId)
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .execute();
  // Used, so no exchange redeems it, and revoked, so the refusal says why.
  await trx
    .updateTable('oauth_codes')
    .set({ used_at: sql<Date>`now()`, revoked_at: sql<Date>`now()` })
    .where('account_id', '=', accountId)
    .where('client_id', '=', clientId)
    .where('used_at', 'is', null)
    .execute();
  return connection;
}

export async function touchConnection(
  q: Queryable,
  accountId: string,
  clientId: string,
): Promise<void> {
  await q
    .updateTable('mcp_connections')
    .set({ last_used_at: sql<Date>`now()` })
    .where('account_id', '=', accountId)
    .where('client_id', '=', clientId)
    .execute();
}
