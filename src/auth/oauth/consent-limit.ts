import {
  type CreditLimit,
  type LimitPeriod,
  limitProblems,
  mcpSpender,
} from '../../domain/spending-limits.ts';
import type { Queryable } from '../../store/database.ts';
import { listSpendingLimits, setSpendingLimits } from '../../store/spending.store.ts';
import { OAuthError } from './oauth-error.ts';

/**
 * The optional spending limit a person sets on the consent page (issue 21): at most
 * `spend_credits` of `spend_category` per `spend_period` for the client being allowed. Left
 * empty, the connection keeps whatever limits it had (none for a new one).
 */
export const consentLimitFields = {
  credits: 'spend_credits',
  category: 'spend_category',
  period: 'spend_period',
} as const;

/** The limit the form asks for, null when it asks for none; a bad one is invalid_request. */
export function consentLimit(form: Readonly<Record<string, string>>): CreditLimit | null {
  const raw = form[consentLimitFields.credits]?.trim() ?? '';
  if (raw === '') return null;
  const limit = {
    category: form[consentLimitFields.category] ?? '',
    period: (form[consentLimitFields.period] ?? '') as LimitPeriod,
    credits: /^\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN,
  };
  const [problem] = limitProblems({ credits: [limit], kinds: null, modelIds: null });
  if (problem !== undefined) {
    throw new OAuthError(
      'invalid_request',
      `The spending limit ${problem.field.replace('limits.credits[0].', '')} ${problem.message}; go back and correct it.`,
      false,
    );
  }
  return limit;
}

/** Sets the connection's credit limit, keeping the kinds and models it may already be held to. */
export async function applyConsentLimit(
  q: Queryable,
  accountId: string,
  clientId: string,
  limit: CreditLimit,
  at: Date,
): Promise<void> {
  const spender = mcpSpender(clientId);
  const [existing] = await listSpendingLimits(q, accountId, spender);
  await setSpendingLimits(
    q,
    accountId,
    spender,
    { credits: [limit], kinds: existing?.kinds ?? null, modelIds: existing?.modelIds ?? null },
    at,
  );
}
