// The web console at `/`: shown to a person holding an ID token from /login (sessionStorage
// "atelier.idToken"), in place of the landing page. It is a browser client of the API like any
// other: the ID token in X-IdP-Token for GraphQL and in connection_init for graphql-ws
// (assets/graphql-ws.js sets globalThis.graphqlWs). An expired token, or one the server refuses,
// sends the person back to /login (client.js). DOM built with createElement only (dom.js). This
// file is the page's shell; each section is a module of its own: generate.js (the form, its
// fields per kind in kind-form.js, followed live through live.js), gallery.js (its cards:
// content-card.js), avatars.js, elements.js (both upload through uploads.js), usage.js, keys.js,
// agents.js (MCP connections), webhooks.js, activity.js (the account's own audit log), with
// limits.js editing the spending limits of keys and agents. Admin accounts also get the
// operator's pages (admin.js).

import { renderActivity } from './activity.js';
import { adminPages, isAdmin, renderAdminPage } from './admin.js';
import { renderMcp } from './agents.js';
import { renderAvatars } from './avatars.js';
import { api, currentToken, forgetToken } from './client.js';
import { h, say, section } from './dom.js';
import { renderElements } from './elements.js';
import { renderHistory } from './gallery.js';
import { renderGenerate } from './generate.js';
import { renderKeys } from './keys.js';
import { closeLive } from './live.js';
import { renderOwnUsage } from './usage.js';
import { renderWebhooks } from './webhooks.js';

// ---------------------------------------------------------------- account and balances

async function renderAccount(root) {
  const { getUserByPrivateId: me } = await api(
    '{ getUserByPrivateId { id alias creditBalances { category amount } } }',
  );
  const who = document.getElementById('who');
  who.textContent = me.alias ?? me.id;
  who.hidden = false;
  const balances = me.creditBalances.length
    ? me.creditBalances.map((b) => h('li', {}, h('strong', {}, b.amount), ` ${b.category}`))
    : [h('li', {}, 'No credits yet.')];
  root.replaceChildren(...balances);
}

// ---------------------------------------------------------------- the page

/**
 * The console's views: `#/` the person's own console, and, for admin accounts only, the
 * operator's pages at `#/admin/<page>[/<id>]` (admin.js), each linked from the navigation.
 */
async function showConsole() {
  const main = document.getElementById('console');
  const balances = h('ul', { id: 'balances', class: 'plain balances' });
  const generate = h('div', {});
  const history = h('div', { id: 'history' });
  const avatars = h('div', {});
  const elements = h('div', {});
  const usage = h('div', { id: 'own-usage' });
  const keys = h('div', {});
  const mcp = h('div', {});
  const webhooks = h('div', {});
  const activity = h('div', {});
  const failure = h('p', { hidden: true });
  const sections = [
    ['credits', 'Credits', balances],
    ['generate', 'Generate', generate],
    ['generations', 'Your generations', history],
    ['avatars', 'Avatars', avatars],
    ['elements', 'Elements', elements],
    ['usage', 'Your usage', usage],
    ['keys', 'API keys', keys],
    ['mcp', 'AI agents (MCP)', mcp],
    ['webhooks', 'Webhooks', webhooks],
    ['activity', 'Activity', activity],
  ];
  // A long page: its sections listed at the top, each a link to where it starts.
  const index = h(
    'nav',
    { id: 'section-nav', 'aria-label': 'Sections of your console' },
    h(
      'ul',
      {},
      sections.map(([id, title]) => h('li', {}, h('a', { href: `#${id}` }, title))),
    ),
  );
  const home = h(
    'div',
    { id: 'home' },
    h('h1', {}, 'Your console'),
    index,
    failure,
    sections.map(([id, title, body]) => section(id, title, body)),
  );
  const adminView = h('div', { id: 'admin-page', hidden: true });
  const nav = h('nav', { id: 'console-nav', 'aria-label': 'Console pages', hidden: true });
  main.replaceChildren(nav, home, adminView);
  document.getElementById('landing').hidden = true;
  document.getElementById('sign-in').hidden = true;
  document.getElementById('sign-out').hidden = false;
  main.hidden = false;
  const afterGeneration = () =>
    Promise.all([renderAccount(balances), renderHistory(history), renderOwnUsage(usage)]);
  const [admin, ...loaded] = await Promise.allSettled([
    isAdmin(),
    renderAccount(balances),
    renderGenerate(generate, afterGeneration),
    renderHistory(history),
    renderAvatars(avatars),
    renderElements(elements),
    renderOwnUsage(usage),
    renderKeys(keys),
    renderMcp(mcp),
    renderWebhooks(webhooks),
    renderActivity(activity),
  ]);
  const failed = loaded.find((r) => r.status === 'rejected');
  if (failed !== undefined) say(failure, failed.reason.message);
  if (admin.status === 'fulfilled' && admin.value) {
    nav.replaceChildren(
      h(
        'ul',
        {},
        h('li', {}, h('a', { href: '#/' }, 'Your console')),
        adminPages.map(([route, title]) =>
          h('li', {}, h('a', { href: `#/admin/${route}` }, title)),
        ),
      ),
    );
    nav.hidden = false;
    const route = () => showRoute(nav, home, adminView).catch((e) => say(failure, e.message));
    window.addEventListener('hashchange', route);
    await route();
  }
  main.dataset.ready = 'true';
}

/** Shows the view the address names: an admin page (#/admin/<page>[/<id>]) or the console. */
async function showRoute(nav, home, adminView) {
  const [first, page, id] = window.location.hash.replace(/^#\/?/, '').split('/');
  const isAdminPage = first === 'admin' && adminPages.some(([route]) => route === page);
  for (const link of nav.querySelectorAll('a')) {
    const current = isAdminPage ? link.hash === `#/admin/${page}` : link.hash === '#/';
    if (current) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  home.hidden = isAdminPage;
  adminView.hidden = !isAdminPage;
  if (!isAdminPage) return;
  delete adminView.dataset.page;
  await renderAdminPage(adminView, page, id === undefined ? undefined : decodeURIComponent(id));
}

document.getElementById('sign-out').addEventListener('click', () => {
  forgetToken();
  closeLive();
  window.location.assign('/');
});

if (currentToken() !== null) {
  showConsole().catch((error) => {
    const main = document.getElementById('console');
    main.hidden = false;
    main.replaceChildren(h('p', { role: 'alert' }, error.message));
  });
}
