// The console's AI agents: the MCP connections the person consented to (revoke, spending
// limits) and how to connect each known client.

import { api } from './client.js';
import { dateTime, h, say } from './dom.js';
import { limitFields, limitsEditor, limitText, reopenEditor } from './limits.js';

export async function renderMcp(root) {
  const list = h('ul', { id: 'connection-list', class: 'plain' });
  const message = h('p', { hidden: true });
  const guides = h('div', { id: 'mcp-guides' });
  root.replaceChildren(list, message, h('h3', {}, 'Connect a client'), guides);
  /** Reads the connections again; `open`: the client whose limits editor stays open. */
  const refresh = async (open) => {
    const { listPersonalMcpConnections: connections, getUserByPrivateId: me } = await api(
      `{ listPersonalMcpConnections { clientId clientName connectedAt lastUsedAt revokedAt
        ${limitFields} } getUserByPrivateId { creditBalances { category } } }`,
    );
    const categories = me.creditBalances.map((b) => b.category);
    list.replaceChildren(
      ...connections.map((c) =>
        h(
          'li',
          { 'data-client-id': c.clientId },
          h('strong', {}, c.clientName ?? c.clientId),
          ` · connected ${dateTime(c.connectedAt)} · last used ${dateTime(c.lastUsedAt)}${limitText(c.limits)} `,
          c.revokedAt
            ? h('span', { class: 'tag' }, `revoked ${dateTime(c.revokedAt)}`)
            : h(
                'button',
                {
                  type: 'button',
                  class: 'secondary',
                  'aria-label': `Revoke ${c.clientName ?? c.clientId}`,
                  onclick: async () => {
                    try {
                      await api(
                        'mutation ($id: ID!) { revokeMcpConnection(clientId: $id) { clientId revokedAt } }',
                        { id: c.clientId },
                      );
                      say(
                        message,
                        `${c.clientName ?? c.clientId} can no longer act for you.`,
                        'status',
                      );
                      await refresh();
                    } catch (error) {
                      say(message, error.message);
                    }
                  },
                },
                'Revoke',
              ),
          c.revokedAt
            ? null
            : limitsEditor({
                id: c.clientId,
                name: c.clientName ?? c.clientId,
                limits: c.limits,
                categories,
                save: async (limits) => {
                  await api(
                    `mutation ($id: ID!, $limits: SpendingLimitsInput) {
                      setMcpConnectionLimits(clientId: $id, limits: $limits) { clientId } }`,
                    { id: c.clientId, limits },
                  );
                  await refresh(c.clientId);
                  say(
                    message,
                    limits === null
                      ? `${c.clientName ?? c.clientId} has no spending limits now.`
                      : `The limits of ${c.clientName ?? c.clientId} are saved.`,
                    'status',
                  );
                },
              }),
        ),
      ),
    );
    if (connections.length === 0) list.append(h('li', {}, 'No AI agent is connected.'));
    if (open !== undefined) reopenEditor(list, open);
  };
  const { listMcpClientInstructions } = await api(
    '{ listMcpClientInstructions { clientName serverUrl instructions configSnippet docsUrl } }',
  );
  guides.replaceChildren(
    ...listMcpClientInstructions.map((g) =>
      h(
        'details',
        {},
        h('summary', {}, g.clientName),
        h('p', { class: 'instructions' }, g.instructions),
        g.configSnippet ? h('pre', {}, h('code', {}, g.configSnippet)) : null,
        g.docsUrl ? h('a', { href: g.docsUrl, rel: 'noreferrer' }, 'Its documentation') : null,
      ),
    ),
  );
  await refresh();
}
