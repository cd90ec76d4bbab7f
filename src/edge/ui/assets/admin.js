// The operator's pages of the console, for admin accounts only (issue 32): Accounts
// (admin-accounts.js), Failed tasks, Models with their backends' health, the Audit log, and
// Usage charts (usage.js). Each page is a hash route, #/admin/<page>[/<id>], rendered afresh
// from the API whenever it is opened; the server refuses every admin field to anyone else
// with 110202, so hiding these pages is a convenience, not the protection.

import { renderAccounts } from './admin-accounts.js';
import { renderAudit } from './admin-audit.js';
import { api, forbidden } from './client.js';
import { dateTime, h, pagedTable, say, section } from './dom.js';
import { renderAdminUsage } from './usage.js';

/** The pages, in the order of the navigation: [route, title, render(root, id)]. */
export const adminPages = [
  ['accounts', 'Accounts', renderAccounts],
  ['tasks', 'Failed tasks', renderFailedTasks],
  ['models', 'Models', renderModels],
  ['audit', 'Audit log', renderAudit],
  ['usage', 'Usage', renderAdminUsage],
];

/** Whether this sign-in may read admin fields: one account is asked for; 110202 means no. */
export async function isAdmin() {
  try {
    await api('{ adminAccounts(first: 1) { nodes { id } } }');
    return true;
  } catch (error) {
    if (error.code === forbidden) return false;
    throw error;
  }
}

/** Renders admin page `route` (with an optional `id`) into `root`. */
export async function renderAdminPage(root, route, id) {
  const [, title, render] = adminPages.find(([name]) => name === route) ?? adminPages[0];
  const body = h('div', { class: 'admin-body' });
  const failure = h('p', { hidden: true });
  root.replaceChildren(
    h('h1', {}, `Admin · ${title}`),
    failure,
    section(`admin-${route}`, title, body),
  );
  try {
    await render(body, id);
  } catch (error) {
    say(
      failure,
      error.code === forbidden ? 'Only admin accounts can see this page.' : error.message,
    );
  }
  root.dataset.page = route;
}

// ---------------------------------------------------------------- failed tasks

const failureText = (f) =>
  f === null
    ? '—'
    : [
        `${f.outcome} on ${f.backend}`,
        f.providerStatus === null ? null : `HTTP ${f.providerStatus}`,
        f.detail,
      ]
        .filter(Boolean)
        .join(' · ');

async function renderFailedTasks(root) {
  await pagedTable(root, {
    id: 'failed-tasks',
    caption: 'Tasks that finished with a code other than 0, newest first',
    columns: ['Submitted', 'Task', 'Account', 'Model', 'Code', 'The account saw', 'Failure'],
    empty: 'No task has failed.',
    page: async (after) => {
      const { adminTasks } = await api(
        `query ($after: String) { adminTasks(filter: { failed: true }, first: 50, after: $after) {
          nodes { taskId accountId accountAlias modelId finishCode finishMessage createdAt
            failure { backend outcome providerStatus detail } }
          pageInfo { hasNextPage endCursor } } }`,
        { after },
      );
      return {
        pageInfo: adminTasks.pageInfo,
        rows: adminTasks.nodes.map((t) => [
          dateTime(t.createdAt),
          h('code', {}, t.taskId),
          h('a', { href: `#/admin/accounts/${t.accountId}` }, t.accountAlias),
          t.modelId,
          String(t.finishCode),
          t.finishMessage,
          h('span', { class: 'detail' }, failureText(t.failure)),
        ]),
      };
    },
  });
}

// ---------------------------------------------------------------- models and backends

async function renderModels(root) {
  const models = [];
  let after = null;
  for (;;) {
    const { listModels } = await api(
      `query ($after: String) { listModels(first: 100, after: $after) {
        nodes { modelId name kind status backends { name engine state inFlight maxConcurrent
          priority weight failures downUntil lastError changedAt } }
        pageInfo { hasNextPage endCursor } } }`,
      { after },
    );
    models.push(...listModels.nodes);
    if (!listModels.pageInfo.hasNextPage) break;
    after = listModels.pageInfo.endCursor;
  }
  root.replaceChildren(h('ul', { class: 'plain', id: 'model-list' }, models.map(modelItem)));
}

function modelItem(m) {
  const down = m.backends.filter((b) => b.state === 'down').length;
  return h(
    'li',
    { 'data-model-id': m.modelId, class: 'model' },
    h('h3', {}, `${m.name} `, h('span', { class: 'tag' }, m.status)),
    h(
      'p',
      { class: 'detail' },
      `${m.modelId} · ${m.kind} · `,
      m.backends.length === 0
        ? 'a built-in engine alone: no backends, no slots'
        : `${m.backends.length} backend${m.backends.length === 1 ? '' : 's'}, ${down} down`,
    ),
    m.backends.length === 0
      ? null
      : h(
          'div',
          {
            class: 'table-scroll',
            tabindex: 0,
            role: 'region',
            'aria-label': `${m.name} backends`,
          },
          h(
            'table',
            {},
            h('caption', {}, `The backends of ${m.name}`),
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Backend', 'Health', 'Runs now', 'Tier', 'Failures in a row', 'Last error'].map(
                  (c) => h('th', { scope: 'col' }, c),
                ),
              ),
            ),
            h(
              'tbody',
              {},
              m.backends.map((b) =>
                h(
                  'tr',
                  { 'data-backend': b.name, 'data-state': b.state },
                  h('td', {}, `${b.name} (${b.engine})`),
                  h(
                    'td',
                    {},
                    h('span', { class: `tag state-${b.state}` }, b.state),
                    b.downUntil ? ` until ${dateTime(b.downUntil)}` : '',
                    ` · since ${dateTime(b.changedAt)}`,
                  ),
                  h('td', {}, `${b.inFlight} of ${b.maxConcurrent ?? 'unlimited'}`),
                  h('td', {}, `${b.priority} (weight ${b.weight})`),
                  h('td', {}, String(b.failures)),
                  h('td', { class: 'detail' }, b.lastError ?? '—'),
                ),
              ),
            ),
          ),
        ),
  );
}
