import { type Kysely, sql } from 'kysely';

/**
 * The built-in identity provider's issuer, recorded once per data store (one row at most).
 * Identities are keyed by (issuer, subject), so an issuer that followed each process's
 * `PUBLIC_URL` linked users added by a command line started without it to an issuer the
 * server never names (issue 18). Filled by the provider's first start, not here: only a
 * running process knows its configuration.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE idp_issuer (
      one_row boolean PRIMARY KEY DEFAULT true CHECK (one_row),
      issuer text NOT NULL,
      recorded_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
}
