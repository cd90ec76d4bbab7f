/**
 * The most one category's balance may hold after a grant, and the most one grant may add:
 * balances are 32-bit integers in the database and GraphQL `Int` in the contract
 * (2,147,483,647), so a cap with room for refunds keeps every sum exact and in range.
 */
export const maxBalance = 1_000_000_000;

/** One category's part of a debit. */
export interface DebitPart {
  readonly category: string;
  readonly amount: number;
}

export type DebitPlan =
  | { readonly ok: true; readonly parts: readonly DebitPart[] }
  | { readonly ok: false; readonly available: number };

/**
 * How `amount` credits are taken from the balances: from `category` alone when the model
 * names one, otherwise from the categories in `order`, each drained before the next
 * (DESIGN.md "Credits"). A plan that cannot be covered says how much was available.
 */
export function planDebit(
  balances: ReadonlyMap<string, number>,
  amount: number,
  order: readonly string[],
  category: string | null,
): DebitPlan {
  const eligible = category === null ? order : [category];
  const available = eligible.reduce((sum, c) => sum + (balances.get(c) ?? 0), 0);
  if (available < amount) return { ok: false, available };
  const parts: DebitPart[] = [];
  let rest = amount;
  for (const c of eligible) {
    if (rest === 0) break;
    const take = Math.min(rest, balances.get(c) ?? 0);
    if (take > 0) parts.push({ category: c, amount: take });
    rest -= take;
  }
  return { ok: true, parts };
}

/**
 * The debit {@link planDebit} makes whenever the balances cover `amount`, when that debit does
 * not depend on them: nothing to take, or one category to take it all from (the model's, or
 * the only one in `order`). Undefined when the balances decide how the debit is split.
 */
export function fixedDebit(
  amount: number,
  order: readonly string[],
  category: string | null,
): readonly DebitPart[] | undefined {
  if (amount <= 0) return amount === 0 ? [] : undefined;
  const eligible = category === null ? order : [category];
  return eligible.length === 1 ? [{ category: eligible[0]!, amount }] : undefined;
}

/**
 * The credit categories there are: the ones spent in order (`CREDIT_CATEGORIES`) and the ones a
 * model's pricing draws from. A grant of any other would be spent by nothing.
 */
export function creditCategories(
  order: readonly string[],
  models: readonly { readonly pricing: { readonly category: string | null } }[],
): string[] {
  const named = models.flatMap((m) => (m.pricing.category === null ? [] : [m.pricing.category]));
  return [...new Set([...order, ...named])];
}
