/** The authenticated caller, passed explicitly to every service call (no ambient user). */
export interface Actor {
  readonly accountId: string;
  readonly role: AccountRole;
  readonly credential: Credential;
  /** Where the request came from (the edge's client address), for the audit log. */
  readonly address?: string;
}

export type AccountRole = 'user' | 'admin';
export type AccountStatus = 'active' | 'suspended' | 'deleted';

/** The three credential boundaries of spec §5; never interchangeable. */
export type Credential =
  | { readonly kind: 'api_key'; readonly apiKeyId: string }
  | { readonly kind: 'id_token'; readonly issuer: string; readonly subject: string }
  | { readonly kind: 'mcp_token'; readonly clientId: string };
