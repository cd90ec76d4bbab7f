// The admin Accounts page: find accounts (adminAccounts), open one (#/admin/accounts/<id>):
// its balances, sign-ins, keys, agent connections, webhooks, recent tasks and audit entries;
// grant or take back credits with a reason; suspend or reactivate it. After every change the
// account is read again, so what the page shows is what the server holds.

import { auditTable } from './admin-audit.js';
import { api } from './client.js';
import { dateTime, formErrors, h, refusalText, say, table } from './dom.js';

export async function renderAccounts(root, accountId) {
  const search = h('input', {
    type: 'search',
    name: 'search',
    id: 'account-search-text',
    autocomplete: 'off',
    placeholder: 'part of an alias or email, or an account ID',
  });
  const form = h(
    'form',
    { id: 'account-search', class: 'inline', role: 'search' },
    h('label', {}, 'Find an account', search),
    h('button', { type: 'submit' }, 'Search'),
  );
  const message = h('p', { hidden: true });
  const results = h('ul', { id: 'account-results', class: 'plain' });
  const detail = h('div', { id: 'account-detail' });
  root.replaceChildren(form, message, results, detail);
  const find = async () => {
    const { adminAccounts } = await api(
      `query ($search: String) { adminAccounts(search: $search, first: 50) {
        nodes { id alias status creditBalances { category amount } } } }`,
      { search: search.value.trim() || null },
    );
    results.replaceChildren(
      ...adminAccounts.nodes.map((a) =>
        h(
          'li',
          { 'data-account-id': a.id },
          h('a', { href: `#/admin/accounts/${a.id}` }, a.alias),
          ' ',
          h('span', { class: 'tag' }, a.status),
          h('span', { class: 'detail' }, ` ${a.id} · ${balancesText(a.creditBalances)}`),
        ),
      ),
    );
    if (adminAccounts.nodes.length === 0) results.append(h('li', {}, 'No account matches.'));
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    say(message, '');
    find().catch((error) => say(message, refusalText(error)));
  });
  await (accountId === undefined ? find() : showAccount(detail, accountId));
}

const balancesText = (balances) =>
  balances.length === 0
    ? 'no credits'
    : balances.map((b) => `${b.amount} ${b.category}`).join(', ');

const accountQuery = `query ($id: ID!) { adminAccount(accountId: $id) {
  id alias status role apiKeyAccess createdAt emails creditBalances { category amount }
  apiKeys { id name prefix createdAt lastUsedAt revokedAt expiresAt }
  mcpConnections { clientId clientName connectedAt lastUsedAt revokedAt }
  webhookEndpoints { id url enabled disabledReason createdAt }
  recentTasks(first: 10) { taskId modelId status finishCode finishMessage createdAt
    creditsCharged creditsRefunded failure { backend outcome providerStatus detail } } } }`;

/** One account, read afresh; `notice` is what the last change did, said in the new page. */
async function showAccount(root, accountId, notice = '') {
  const { adminAccount: a } = await api(accountQuery, { id: accountId });
  if (a === null) {
    root.replaceChildren(h('p', { role: 'alert' }, `No account ${accountId}.`));
    return;
  }
  const done = h('p', { id: 'account-notice', hidden: true });
  const audit = h('div', {});
  root.replaceChildren(
    h('h3', { id: 'account-title' }, a.alias, ' ', h('span', { class: 'tag' }, a.status)),
    done,
    h(
      'dl',
      {},
      h('dt', {}, 'Account ID'),
      h('dd', {}, h('code', {}, a.id)),
      h('dt', {}, 'Role'),
      h('dd', {}, a.role),
      h('dt', {}, 'Signs in with'),
      h('dd', {}, a.emails.join(', ') || '—'),
      h('dt', {}, 'API keys allowed'),
      h('dd', {}, a.apiKeyAccess ? 'yes' : 'no'),
      h('dt', {}, 'Created'),
      h('dd', {}, dateTime(a.createdAt)),
    ),
    h('h4', {}, 'Credits'),
    h(
      'ul',
      { id: 'account-balances', class: 'plain balances' },
      a.creditBalances.length === 0
        ? h('li', {}, 'No credits.')
        : a.creditBalances.map((b) => h('li', {}, h('strong', {}, b.amount), ` ${b.category}`)),
    ),
    adjustForm(root, a),
    statusControl(root, a),
    h('h4', {}, 'Recent tasks'),
    table(
      'The latest ten tasks',
      ['Submitted', 'Task', 'Model', 'State', 'Credits', 'Failure'],
      a.recentTasks.map((t) => [
        dateTime(t.createdAt),
        h('code', {}, t.taskId),
        t.modelId,
        t.status === 'finished' ? `finished, code ${t.finishCode}` : t.status,
        `${t.creditsCharged} (${t.creditsRefunded} refunded)`,
        t.failure === null ? t.finishMessage : `${t.failure.outcome}: ${t.failure.detail ?? ''}`,
      ]),
    ),
    h('h4', {}, 'API keys'),
    table(
      'API keys (never a secret)',
      ['Name', 'Prefix', 'Created', 'Last used', 'State'],
      a.apiKeys.map((k) => [
        k.name,
        `${k.prefix}…`,
        dateTime(k.createdAt),
        dateTime(k.lastUsedAt),
        k.revokedAt ? `revoked ${dateTime(k.revokedAt)}` : 'active',
      ]),
    ),
    h('h4', {}, 'AI agents (MCP)'),
    table(
      'Connected agents',
      ['Client', 'Connected', 'Last used', 'State'],
      a.mcpConnections.map((c) => [
        c.clientName ?? c.clientId,
        dateTime(c.connectedAt),
        dateTime(c.lastUsedAt),
        c.revokedAt ? `revoked ${dateTime(c.revokedAt)}` : 'active',
      ]),
    ),
    h('h4', {}, 'Webhooks'),
    table(
      'Webhook endpoints',
      ['URL', 'Created', 'State'],
      a.webhookEndpoints.map((w) => [
        w.url,
        dateTime(w.createdAt),
        w.enabled ? 'enabled' : `disabled${w.disabledReason ? `: ${w.disabledReason}` : ''}`,
      ]),
    ),
    h('h4', {}, 'Audit entries'),
    audit,
  );
  if (notice !== '') say(done, notice, 'status');
  await auditTable(audit, { accountId: a.id }, { first: 10 });
  root.dataset.accountId = a.id;
}

/** Grant or take back credits, with the reason the ledger and the audit log keep. */
function adjustForm(root, account) {
  const category = h('input', {
    name: 'category',
    required: true,
    value: account.creditBalances[0]?.category ?? 'standard',
  });
  const amount = h('input', { name: 'amount', type: 'number', min: 1, step: 1, required: true });
  const reason = h('input', { name: 'reason', required: true, maxlength: 200 });
  const direction = h(
    'select',
    { name: 'direction' },
    h('option', { value: 'Grant' }, 'Grant'),
    h('option', { value: 'Deduct' }, 'Take back'),
  );
  const submit = h('button', { type: 'submit' }, 'Apply');
  const message = h('p', { hidden: true });
  const form = h(
    'form',
    { id: 'adjust-form', novalidate: true },
    h('label', {}, 'Grant or take back', direction),
    h('label', {}, 'Category', category),
    h('label', {}, 'Amount (credits)', amount),
    h('label', {}, 'Reason (kept on the ledger and in the audit log)', reason),
    submit,
    message,
  );
  const errors = formErrors(form, message);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    errors.clear();
    const verb = direction.value;
    const credits = Number(amount.value);
    // Int is all GraphQL takes: a fraction would come back as a variable error, not a field's.
    if (amount.value !== '' && !Number.isInteger(credits)) {
      errors.show({ extensions: { field: 'amount' }, message: 'must be a whole number' });
      return;
    }
    submit.disabled = true;
    try {
      const data = await api(
        `mutation ($input: CreditAdjustmentInput!) {
          admin${verb}Credits(input: $input) { category amount } }`,
        {
          input: {
            accountId: account.id,
            category: category.value.trim(),
            // Empty is 0, which the server refuses next to the field, like any bad amount.
            amount: amount.value === '' ? 0 : credits,
            reason: reason.value,
          },
        },
      );
      const balance = data[`admin${verb}Credits`];
      const did = verb === 'Grant' ? 'Granted' : 'Took back';
      await showAccount(
        root,
        account.id,
        `${did} ${amount.value} ${balance.category}: the balance is now ${balance.amount} ${balance.category}.`,
      );
    } catch (error) {
      errors.show(error);
      submit.disabled = false;
    }
  });
  return h('div', {}, h('h4', {}, 'Adjust credits'), form);
}

/** Suspend (every credential stops on its next request) or reactivate. */
function statusControl(root, account) {
  const suspended = account.status === 'suspended';
  const message = h('p', { hidden: true });
  const button = h(
    'button',
    { type: 'button', id: 'account-status-button', class: 'secondary' },
    suspended ? 'Reactivate this account' : 'Suspend this account',
  );
  button.addEventListener('click', async () => {
    say(message, '');
    button.disabled = true;
    try {
      const { adminSetAccountStatus: changed } = await api(
        `mutation ($id: ID!, $status: AccountStatus!) {
          adminSetAccountStatus(accountId: $id, status: $status) { id status } }`,
        { id: account.id, status: suspended ? 'active' : 'suspended' },
      );
      await showAccount(
        root,
        account.id,
        changed.status === 'suspended'
          ? 'Suspended: every key, sign-in and agent of this account is refused from now on.'
          : 'Reactivated.',
      );
    } catch (error) {
      say(message, refusalText(error));
      button.disabled = false;
    }
  });
  return h(
    'div',
    {},
    h('h4', {}, 'Status'),
    h(
      'p',
      { class: 'detail' },
      suspended
        ? 'Suspended: its keys, sign-ins and agents are refused.'
        : 'Active. Suspending stops every credential of the account at once, on every node.',
    ),
    button,
    message,
  );
}
