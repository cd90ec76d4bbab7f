import type { AccountRole, AccountStatus, Actor } from '../domain/actor.ts';
import { type AuditActor, commandLine } from '../domain/audit.ts';
import { maxBalance } from '../domain/credits.ts';
import type { CredentialEvents } from '../events/credential-events.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError, ErrorCode, type FieldProblem, invalidInput } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import {
  type AccountPatch,
  type AccountWithBalances,
  findAccount,
  findAccountByAlias,
  findAccountsWithBalances,
  findAccountWithBalances,
  insertAccount,
  listAccountsWithBalances,
  updateAccount,
} from '../store/account.store.ts';
import { appendAudit } from '../store/audit.store.ts';
import { changeBalance } from '../store/credit.store.ts';
import type { Db } from '../store/database.ts';

export interface CreditBalance {
  category: string;
  amount: number;
}

/** The account as its owner sees it (`getUserByPrivateId`). */
export interface UserProfile {
  id: string;
  alias: string;
  status: AccountStatus;
  role: AccountRole;
  apiKeyAccess: boolean;
  creditBalances: CreditBalance[];
  createdAt: Date;
}

export interface CreateAccountInput {
  alias: string;
  role?: AccountRole;
  apiKeyAccess?: boolean;
  /** Opening balances by category. */
  credits?: Readonly<Record<string, number>>;
}

export interface GrantInput {
  accountId: string;
  category: string;
  amount: number;
  /** Why: kept on the ledger row and in the audit log. */
  reference?: string | undefined;
}

/** Accounts and their credit balances: the owner's view and the operator's commands. */
export class AccountService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #changes: Pick<CredentialEvents, 'publish'>;
  readonly #metrics: Metrics | undefined;
  #categories: readonly string[];

  constructor(deps: {
    db: Db;
    clock: Clock;
    /** Where status changes are announced, for every node's credential cache. */
    changes: Pick<CredentialEvents, 'publish'>;
    /**
     * The credit categories there are: those `CREDIT_CATEGORIES` spends and those a model's
     * pricing draws from. Credits of any other would be spent by nothing.
     */
    categories: readonly string[];
    /** Grants, counted after their transaction commits (default: none). */
    metrics?: Metrics;
  }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#changes = deps.changes;
    this.#categories = deps.categories;
    this.#metrics = deps.metrics;
  }

  /** The categories of a reloaded catalogue (`models reload`). */
  replaceCategories(categories: readonly string[]): void {
    this.#categories = categories;
  }

  async getProfile(actor: Actor): Promise<UserProfile> {
    const profile = await this.#profile(actor.accountId);
    if (profile === undefined)
      throw new AppError(ErrorCode.NotFound, 'The account no longer exists.');
    return profile;
  }

  /** Operator: opens an account with optional opening balances, in one transaction. */
  async create(input: CreateAccountInput, by: AuditActor = commandLine): Promise<UserProfile> {
    const problems = [...aliasProblems(input.alias)];
    for (const [category, amount] of Object.entries(input.credits ?? {})) {
      problems.push(...grantProblems(category, amount, this.#categories));
    }
    if (problems.length > 0) throw invalidInput(problems);
    const id = newId('acc');
    await this.#db.transaction().execute(async (trx) => {
      if ((await findAccountByAlias(trx, input.alias)) !== undefined) {
        throw invalidInput([{ field: 'alias', message: `"${input.alias}" is taken` }]);
      }
      await insertAccount(trx, {
        id,
        alias: input.alias,
        role: input.role ?? 'user',
        apiKeyAccess: input.apiKeyAccess ?? false,
      });
      for (const [category, amount] of Object.entries(input.credits ?? {})) {
        await changeBalance(trx, {
          accountId: id,
          category,
          delta: amount,
          reason: 'grant',
          reference: 'account opening',
        });
      }
      await appendAudit(trx, this.#clock.now(), by, {
        accountId: id,
        action: 'account.created',
        target: id,
        detail: {
          alias: input.alias,
          role: input.role ?? 'user',
          apiKeyAccess: input.apiKeyAccess ?? false,
          credits: input.credits ?? {},
        },
      });
    });
    const opening = Object.entries(input.credits ?? {});
    this.#metrics?.countCredits(
      'grant',
      opening.map(([category, amount]) => ({ category, amount })),
    );
    return this.#profileOrThrow(id);
  }

  /** Operator: adds credits of one category; returns the new balance. */
  async grant(input: GrantInput, by: AuditActor = commandLine): Promise<CreditBalance> {
    const balance = await this.#change(input, 'grant', by);
    this.#metrics?.countCredits('grant', [{ category: input.category, amount: input.amount }]);
    return balance;
  }

  /**
   * Operator: takes credits of one category back (a correction, a chargeback), with a reason;
   * never below zero. Returns the new balance.
   */
  async deduct(input: GrantInput, by: AuditActor = commandLine): Promise<CreditBalance> {
    const balance = await this.#change(input, 'deduct', by);
    this.#metrics?.countCredits('deduction', [{ category: input.category, amount: input.amount }]);
    return balance;
  }

  async #change(
    input: GrantInput,
    direction: 'grant' | 'deduct',
    by: AuditActor,
  ): Promise<CreditBalance> {
    const problems = grantProblems(input.category, input.amount, this.#categories);
    const reason = input.reference?.trim() ?? '';
    if (input.reference !== undefined && (reason === '' || reason.length > 200)) {
      problems.push({ field: 'reason', message: 'must be 1 to 200 characters' });
    }
    if (problems.length > 0) throw invalidInput(problems);
    const reference =
      reason === '' ? `operator ${direction} ${this.#clock.now().toISOString()}` : reason;
    const amount = await this.#db.transaction().execute(async (trx) => {
      if ((await findAccount(trx, input.accountId)) === undefined) throw accountNotFound();
      const balance = await changeBalance(trx, {
        accountId: input.accountId,
        category: input.category,
        delta: direction === 'grant' ? input.amount : -input.amount,
        reason: direction === 'grant' ? 'grant' : 'deduction',
        reference,
        max: maxBalance,
      });
      if (balance === undefined) {
        throw invalidInput([
          {
            field: 'amount',
            message:
              direction === 'grant'
                ? `would bring the balance above ${maxBalance}`
                : 'is more than the balance of this category',
          },
        ]);
      }
      await appendAudit(trx, this.#clock.now(), by, {
        accountId: input.accountId,
        action: direction === 'grant' ? 'credits.granted' : 'credits.deducted',
        target: input.category,
        detail: { amount: input.amount, balance, reason: reference },
      });
      return balance;
    });
    return { category: input.category, amount };
  }

  /** Operator: suspends, deletes or reactivates an account; turns API-key access on or off. */
  async update(
    accountId: string,
    patch: AccountPatch,
    by: AuditActor = commandLine,
  ): Promise<UserProfile> {
    if (patch.status === undefined && patch.apiKeyAccess === undefined) {
      throw invalidInput([{ field: 'patch', message: 'nothing to change' }]);
    }
    const row = await this.#db.transaction().execute(async (trx) => {
      const before = await findAccount(trx, accountId);
      const updated = await updateAccount(trx, accountId, patch);
      if (before === undefined || updated === undefined) return undefined;
      await appendAudit(trx, this.#clock.now(), by, {
        accountId,
        action: 'account.updated',
        target: accountId,
        detail: {
          ...(patch.status === undefined
            ? {}
            : { status: { from: before.status, to: updated.status } }),
          ...(patch.apiKeyAccess === undefined
            ? {}
            : { apiKeyAccess: { from: before.api_key_access, to: updated.api_key_access } }),
        },
      });
      return updated;
    });
    if (row === undefined) throw accountNotFound();
    // A suspension or deletion takes effect on the very next request, on every node.
    await this.#changes.publish({ type: 'account_changed', accountId });
    return this.#profileOrThrow(accountId);
  }

  /** Operator: one account, by id or by alias, with its balances. */
  async show(ref: { id?: string; alias?: string }): Promise<UserProfile> {
    const id =
      ref.id ??
      (ref.alias === undefined ? undefined : (await findAccountByAlias(this.#db, ref.alias))?.id);
    if (id === undefined) throw accountNotFound();
    return this.#profileOrThrow(id);
  }

  /**
   * Operator: accounts by alias, at most `first` (1 to 1,000), after the alias `after`; with
   * `next`, the alias to pass as `after` for the following page.
   */
  async list(
    first: number,
    after: string | null,
  ): Promise<{ accounts: UserProfile[]; next: string | null }> {
    if (!Number.isInteger(first) || first < 1 || first > 1_000) {
      throw invalidInput([{ field: 'first', message: 'must be a whole number from 1 to 1000' }]);
    }
    const rows = await listAccountsWithBalances(this.#db, first + 1, after);
    const page = rows.slice(0, first).map(profileOf);
    return { accounts: page, next: rows.length > first ? (page.at(-1)?.alias ?? null) : null };
  }

  /** Operator: these accounts' profiles, in the order given (unknown IDs left out). */
  async profiles(ids: readonly string[]): Promise<UserProfile[]> {
    const byId = new Map(
      (await findAccountsWithBalances(this.#db, ids)).map((row) => [row.id, profileOf(row)]),
    );
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  async #profileOrThrow(accountId: string): Promise<UserProfile> {
    const profile = await this.#profile(accountId);
    if (profile === undefined) throw accountNotFound();
    return profile;
  }

  async #profile(accountId: string): Promise<UserProfile | undefined> {
    const account = await findAccountWithBalances(this.#db, accountId);
    return account === undefined ? undefined : profileOf(account);
  }
}

function profileOf(account: AccountWithBalances): UserProfile {
  return {
    id: account.id,
    alias: account.alias,
    status: account.status,
    role: account.role,
    apiKeyAccess: account.api_key_access,
    creditBalances: account.balances,
    createdAt: account.created_at,
  };
}

function accountNotFound(): AppError {
  return new AppError(ErrorCode.NotFound, 'No such account.');
}

function aliasProblems(alias: string): FieldProblem[] {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(alias)
    ? []
    : [{ field: 'alias', message: 'use 1 to 64 letters, digits, ".", "_" or "-"' }];
}

function grantProblems(
  category: string,
  amount: number,
  categories: readonly string[],
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!/^[a-z0-9][a-z0-9_-]{0,31}$/.test(category)) {
    problems.push({
      field: 'category',
      message: `"${category}" is not a category name (a-z, 0-9, _ -)`,
    });
  } else if (!categories.includes(category)) {
    problems.push({
      field: 'category',
      message: `no category "${category}": the categories are ${categories.join(', ')} (CREDIT_CATEGORIES, and those models' pricing names)`,
    });
  }
  if (!Number.isInteger(amount) || amount <= 0 || amount > maxBalance) {
    problems.push({ field: 'amount', message: `must be a whole number from 1 to ${maxBalance}` });
  }
  return problems;
}
