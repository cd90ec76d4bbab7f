// The console's API keys: create one (its secret shown once), revoke, and set spending limits.

import { api } from './client.js';
import { dateTime, h, say } from './dom.js';
import { limitFields, limitsEditor, limitText, reopenEditor } from './limits.js';

export async function renderKeys(root) {
  const list = h('ul', { id: 'key-list', class: 'plain' });
  const secret = h('div', { id: 'new-key', hidden: true });
  const message = h('p', { hidden: true });
  const name = h('input', { name: 'name', required: true, maxlength: 100 });
  const form = h(
    'form',
    { id: 'key-form', class: 'inline' },
    h('label', {}, 'New key name', name),
    h('button', { type: 'submit' }, 'Create key'),
  );
  root.replaceChildren(form, secret, message, list);
  /** Reads the keys again; `open`: the key whose limits editor stays open. */
  const refresh = async (open) => {
    const { listApiKeys, getUserByPrivateId: me } = await api(
      `{ listApiKeys { id name prefix createdAt lastUsedAt revokedAt expiresAt ${limitFields} }
        getUserByPrivateId { creditBalances { category } } }`,
    );
    const categories = me.creditBalances.map((b) => b.category);
    list.replaceChildren(
      ...listApiKeys.map((key) =>
        h(
          'li',
          { 'data-key-id': key.id },
          h('strong', {}, key.name),
          ` ${key.prefix}… · created ${dateTime(key.createdAt)} · last used ${dateTime(key.lastUsedAt)}${limitText(key.limits)} `,
          key.revokedAt
            ? h('span', { class: 'tag' }, `revoked ${dateTime(key.revokedAt)}`)
            : h(
                'button',
                {
                  type: 'button',
                  class: 'secondary',
                  'aria-label': `Revoke ${key.name}`,
                  onclick: async () => {
                    try {
                      await api(
                        'mutation ($id: ID!) { revokeApiKey(apiKeyId: $id) { id revokedAt } }',
                        { id: key.id },
                      );
                      await refresh();
                    } catch (error) {
                      say(message, error.message);
                    }
                  },
                },
                'Revoke',
              ),
          key.revokedAt
            ? null
            : limitsEditor({
                id: key.id,
                name: key.name,
                limits: key.limits,
                categories,
                save: async (limits) => {
                  await api(
                    `mutation ($id: ID!, $limits: SpendingLimitsInput) {
                      setApiKeyLimits(apiKeyId: $id, limits: $limits) { id } }`,
                    { id: key.id, limits },
                  );
                  await refresh(key.id);
                  say(
                    message,
                    limits === null
                      ? `${key.name} has no spending limits now.`
                      : `The limits of ${key.name} are saved.`,
                    'status',
                  );
                },
              }),
        ),
      ),
    );
    if (listApiKeys.length === 0) list.append(h('li', {}, 'No API keys.'));
    if (open !== undefined) reopenEditor(list, open);
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(message, '');
    try {
      const { createApiKey } = await api(
        'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { apiKey { id name } secret } }',
        { input: { name: name.value } },
      );
      secret.replaceChildren(
        h(
          'p',
          {},
          `The secret of ${createApiKey.apiKey.name}; copy it now, it is not shown again:`,
        ),
        h('output', { id: 'key-secret' }, createApiKey.secret),
      );
      secret.hidden = false;
      name.value = '';
      await refresh();
    } catch (error) {
      say(message, error.message);
    }
  });
  await refresh();
}
