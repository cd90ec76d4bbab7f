// The admin Audit log page, and the table of entries the admin's account page and each
// person's own Activity section (activity.js) show too.

import { api } from './client.js';
import { dateTime, h, pagedTable, say } from './dom.js';

/** Everyone's entries, newest first, narrowed by action or account. */
export async function renderAudit(root) {
  const action = h('input', { name: 'action', id: 'audit-action', placeholder: 'credits.granted' });
  const account = h('input', { name: 'accountId', id: 'audit-account', placeholder: 'acc_…' });
  const form = h(
    'form',
    { id: 'audit-filter', class: 'inline' },
    h('label', {}, 'Action', action),
    h('label', {}, 'Account ID', account),
    h('button', { type: 'submit' }, 'Filter'),
  );
  const message = h('p', { hidden: true });
  const entries = h('div', {});
  root.replaceChildren(form, message, entries);
  const show = () =>
    auditTable(entries, {
      action: action.value.trim() || undefined,
      accountId: account.value.trim() || undefined,
    });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    say(message, '');
    show().catch((error) => say(message, error.message));
  });
  await show();
}

/**
 * The audit entries that `filter` selects, newest first, a page at a time. `own`: the person's
 * own activity (their console), without the account column and its admin links.
 */
export function auditTable(root, filter, { first = 50, own = false } = {}) {
  return pagedTable(root, {
    id: own ? 'activity-entries' : 'audit-entries',
    caption: own ? 'What happened to your account, newest first' : 'Audit entries, newest first',
    columns: ['When', ...(own ? [] : ['Account']), 'Action', 'Target', 'Who', 'Detail'],
    empty: 'No entries.',
    page: async (after) => {
      const { auditLog } = await api(
        `query ($filter: AuditLogFilter, $first: Int, $after: String) {
          auditLog(filter: $filter, first: $first, after: $after) {
            nodes { id at accountId action target detail actor { accountId credential address } }
            pageInfo { hasNextPage endCursor } } }`,
        { filter, first, after },
      );
      return {
        pageInfo: auditLog.pageInfo,
        rows: auditLog.nodes.map((e) => [
          dateTime(e.at),
          ...(own
            ? []
            : [
                e.accountId === null
                  ? '—'
                  : h('a', { href: `#/admin/accounts/${e.accountId}` }, e.accountId),
              ]),
          e.action,
          e.target,
          [e.actor.credential, e.actor.address].filter(Boolean).join(' · '),
          e.detail === null ? '—' : h('span', { class: 'detail' }, detailText(e.detail)),
        ]),
      };
    },
  });
}

/** An entry's detail as "amount: 25, reason: outage credit", nested values as JSON. */
function detailText(detail) {
  if (typeof detail !== 'object' || Array.isArray(detail)) return JSON.stringify(detail);
  return Object.entries(detail)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');
}
