// The console's Activity section: what happened to the person's own account, from the audit
// log (`auditLog` filtered to the account, so an admin sees their own here too): keys made and
// revoked, agents connected and revoked, limits changed, credits an operator granted or took
// back, each with who did it and from where.

import { auditTable } from './admin-audit.js';
import { api } from './client.js';
import { h, refusalText, say } from './dom.js';

export async function renderActivity(root) {
  const { getUserByPrivateId: me } = await api('{ getUserByPrivateId { id } }');
  const entries = h('div', {});
  const message = h('p', { hidden: true });
  const again = h('button', { type: 'button', class: 'secondary' }, 'Read it again');
  const read = () => auditTable(entries, { accountId: me.id }, { first: 20, own: true });
  again.addEventListener('click', () => {
    say(message, '');
    read().catch((error) => say(message, refusalText(error)));
  });
  root.replaceChildren(again, message, entries);
  await read();
}
