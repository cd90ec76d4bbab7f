import { randomToken, sha256Hex } from '../../shared/secrets.ts';
import type { Db } from '../../store/database.ts';
import {
  deleteExpiredAuthorizationState,
  deleteSession,
  insertSession,
  rotateSession,
  type SessionLifetime,
  touchSession,
} from '../../store/oauth.store.ts';
import { lookUpCredential } from '../credentials-unavailable.ts';
import { accessTokenLifetimeSeconds } from './access-tokens.ts';

/** A browser session as the flow sees it; the id itself lives only in the cookie. */
export interface BrowserSession {
  readonly id: string;
  readonly idHash: string;
  readonly accountId: string | null;
  readonly csrfToken: string;
}

export const sessionIdleMs = 30 * 60_000; // spec §8: 30 minutes of inactivity

/**
 * Browser sessions of the sign-in and consent flow (spec §4.4). They authenticate only that
 * flow — never `/mcp` or `/graphql`. Stored as hashes; idle for 30 minutes, or older than
 * `maxAgeMs` however active, means gone; sign-in replaces the id (no session fixation).
 */
export class BrowserSessions {
  readonly #db: Db;
  readonly #lifetime: SessionLifetime;

  constructor(db: Db, options: { maxAgeMs: number }) {
    this.#db = db;
    this.#lifetime = { idleMs: sessionIdleMs, maxAgeMs: options.maxAgeMs };
  }

  async create(): Promise<BrowserSession> {
    const session = fresh(null);
    await insertSession(this.#db, {
      idHash: session.idHash,
      accountId: null,
      csrfToken: session.csrfToken,
    });
    return session;
  }

  /** The live session behind a cookie value, extending its inactivity window. */
  async find(id: string | undefined): Promise<BrowserSession | null> {
    if (id === undefined || !/^[A-Za-z0-9_-]{43}$/.test(id)) return null;
    const row = await lookUpCredential(() => touchSession(this.#db, sha256Hex(id), this.#lifetime));
    return row === undefined
      ? null
      : { id, idHash: row.id_hash, accountId: row.account_id, csrfToken: row.csrf_token };
  }

  /** Signs the session in as `accountId` under a new id (and a new CSRF token). */
  async signIn(session: BrowserSession, accountId: string): Promise<BrowserSession> {
    const next = fresh(accountId);
    await rotateSession(this.#db, session.idHash, {
      idHash: next.idHash,
      accountId,
      csrfToken: next.csrfToken,
    });
    return next;
  }

  async destroy(session: BrowserSession): Promise<void> {
    await deleteSession(this.#db, session.idHash);
  }

  /**
   * Deletes ended sessions and the flow's other expired rows (pending authorizations, codes,
   * tokens). Run periodically: every cookie-less `GET /oauth/authorize` writes rows that
   * nobody may ever come back for.
   */
  sweepExpired() {
    return deleteExpiredAuthorizationState(this.#db, {
      ...this.#lifetime,
      usedCodeRetentionMs: accessTokenLifetimeSeconds * 1000,
    });
  }
}

function fresh(accountId: string | null): BrowserSession {
  const id = randomToken();
  return { id, idHash: sha256Hex(id), accountId, csrfToken: randomToken() };
}
