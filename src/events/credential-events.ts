import { LocalEvents } from './local-events.ts';

/** A credential that may no longer authorize calls; every node forgets what it cached of it. */
export type CredentialChange =
  | { readonly type: 'api_key_revoked'; readonly apiKeyId: string }
  /** Suspended, deleted, reactivated, or its API-key access changed. */
  | { readonly type: 'account_changed'; readonly accountId: string };

/**
 * What a subscriber hears: a change from any process, or that delivery stopped or resumed.
 * While delivery is down, changes made elsewhere are missed for good.
 */
export type CredentialEvent =
  | CredentialChange
  | { readonly type: 'delivery'; readonly live: boolean };

/** "A credential changed", from every process to every process. */
export interface CredentialEvents {
  /** Resolves once the change is on its way to every node (after the write committed). */
  publish(change: CredentialChange): Promise<void>;
  subscribe(listener: (event: CredentialEvent) => void): () => void;
  /** Whether every change published anywhere reaches this process's subscribers right now. */
  readonly live: boolean;
  close(): Promise<void>;
}

/** Within one process: the embedded database admits no other process, so nothing is missed. */
export class LocalCredentialEvents
  extends LocalEvents<CredentialEvent>
  implements CredentialEvents
{
  readonly live: boolean = true;

  async publish(change: CredentialChange): Promise<void> {
    this.deliver(change);
  }
}
