import type { ColumnType, Generated } from 'kysely';

/** Kysely's view of the tables created by `migrations/`. Wire names stay snake_case. */
export interface Tables {
  accounts: AccountsTable;
  credit_balances: CreditBalancesTable;
  credit_ledger: CreditLedgerTable;
  api_keys: ApiKeysTable;
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
  reason: 'grant' | 'debit' | 'refund';
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
