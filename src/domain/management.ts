import type { Credential } from './actor.ts';

/**
 * What a credential may do to the account's own setup: its API keys, their spending limits,
 * its webhooks and its MCP connections (issue 30 §2).
 * - `full`: everything. The owner signed in (an ID token), or an API key without limits: such
 *   a key can already spend everything the account holds, so managing keys gives it nothing
 *   more.
 * - `self`: a key with spending limits may read its own entry and revoke itself, nothing more;
 *   otherwise a key handed out to be limited could mint an unlimited one or lift its limits.
 * - `none`: an MCP token reaches only the MCP tools, which manage nothing.
 */
export type ManagementRight = 'full' | 'self' | 'none';

export function managementRight(credential: Credential, limited: boolean): ManagementRight {
  switch (credential.kind) {
    case 'id_token':
      return 'full';
    case 'api_key':
      return limited ? 'self' : 'full';
    case 'mcp_token':
      return 'none';
  }
}
