// The console's Avatars section (issue 33): the account's avatars (listAvatars, a page at a
// time) with their portraits; a form that makes one from a portrait (the upload step of
// uploads.js, then createAvatar); delete after a confirmation (deleteAvatar). The Generate
// form's avatar field (avatarField) follows every change without a reload.

import { api } from './client.js';
import { confirmedDelete, dateTime, formErrors, h, refusalText, say } from './dom.js';
import { asFieldError, downloadUrls, imageField, uploadChosen } from './uploads.js';
import { allVoices } from './voices.js';

/** Sent on `document` after an avatar is made or deleted; `detail` is the new avatar's id. */
const changed = 'atelier:avatars-changed';
const pageSize = 20;

const avatarFields = 'avatarId name portraitMediaId voiceModelId createdAt';

export async function renderAvatars(root) {
  const view = {
    message: h('p', { id: 'avatars-message', tabindex: -1, hidden: true }),
    list: h('div', { id: 'avatar-list' }),
  };
  root.replaceChildren(
    h(
      'p',
      { class: 'detail' },
      'An avatar is a portrait that speaks: the Generate form’s “Avatar video” makes it say a ' +
        'script. Use a photo or a picture of one face, looking at the camera.',
    ),
    await createForm(view),
    view.message,
    h('h3', {}, 'Your avatars'),
    view.list,
  );
  await showAvatars(view);
}

async function createForm(view) {
  const voices = await allVoices();
  const submit = h('button', { type: 'submit' }, 'Create the avatar');
  const message = h('p', { hidden: true });
  const form = h(
    'form',
    { id: 'avatar-form', novalidate: true },
    h('h3', {}, 'Create an avatar'),
    h('label', {}, 'Name', h('input', { name: 'name', required: true, maxlength: 100 })),
    imageField('portraitMediaId', 'Portrait', {
      hint: 'A PNG, JPEG, WebP or GIF image.',
    }),
    h(
      'label',
      {},
      'Default voice',
      h(
        'select',
        { name: 'voiceModelId' },
        h('option', { value: '' }, 'None (English, US)'),
        voices.map((v) => h('option', { value: v.voiceModelId }, `${v.name} (${v.language})`)),
      ),
    ),
    submit,
    message,
  );
  const errors = formErrors(form, message);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    errors.clear();
    say(view.message, '');
    const data = new FormData(form);
    const name = String(data.get('name') ?? '').trim();
    if (name === '') {
      return errors.show({ message: 'Give the avatar a name.', extensions: { field: 'name' } });
    }
    if (form.elements.namedItem('portraitMediaId').files.length === 0) {
      return errors.show({
        message: 'Choose a portrait.',
        extensions: { field: 'portraitMediaId' },
      });
    }
    submit.disabled = true;
    try {
      const portraitMediaId = await uploadChosen(form, 'portraitMediaId');
      const voiceModelId = String(data.get('voiceModelId') ?? '') || undefined;
      const { createAvatar: avatar } = await api(
        `mutation ($input: CreateAvatarInput!) { createAvatar(input: $input) { avatarId name } }`,
        { input: { name, portraitMediaId, voiceModelId } },
      );
      form.reset();
      await showAvatars(view);
      document.dispatchEvent(new CustomEvent(changed, { detail: avatar.avatarId }));
      say(
        view.message,
        `${avatar.name} is ready: choose it under Generate, Avatar video.`,
        'status',
      );
      view.message.focus();
    } catch (error) {
      errors.show(asFieldError(error, 'portraitMediaId', ['portraitMediaId']));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

/** Reads the first page of avatars again; "Show more" adds the next ones under it. */
async function showAvatars(view) {
  const items = h('ul', { class: 'media-list' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Show more');
  let after = null;
  const load = async () => {
    const { listAvatars: page } = await api(
      `query ($first: Int, $after: String) { listAvatars(first: $first, after: $after) {
        nodes { ${avatarFields} } pageInfo { hasNextPage endCursor } } }`,
      { first: pageSize, after },
    );
    const portraits = await downloadUrls(page.nodes.map((a) => a.portraitMediaId));
    items.append(...page.nodes.map((a) => avatarItem(view, a, portraits.get(a.portraitMediaId))));
    after = page.pageInfo.endCursor;
    more.hidden = !page.pageInfo.hasNextPage;
  };
  more.addEventListener('click', () =>
    load().catch((error) => say(view.message, refusalText(error))),
  );
  await load();
  view.list.replaceChildren(
    items.children.length === 0 ? h('p', { id: 'no-avatars' }, 'No avatars yet.') : items,
    more,
  );
}

function avatarItem(view, a, portraitUrl) {
  const titleId = `avatar-${a.avatarId}-title`;
  const message = h('p', { hidden: true });
  const { actions, confirm } = confirmedDelete({
    question: `Delete ${a.name}? Avatar videos already made keep playing.`,
    message,
    remove: async () => {
      await api('mutation ($id: ID!) { deleteAvatar(avatarId: $id) }', { id: a.avatarId });
      await showAvatars(view);
      document.dispatchEvent(new CustomEvent(changed));
      say(view.message, `${a.name} is deleted.`, 'status');
      view.message.focus();
    },
  });
  return h(
    'li',
    { class: 'media-item', 'data-avatar-id': a.avatarId },
    h(
      'article',
      { 'aria-labelledby': titleId },
      portraitUrl === undefined
        ? null
        : h('img', { class: 'thumb', src: portraitUrl, alt: `Portrait of ${a.name}` }),
      h('h4', { id: titleId }, a.name),
      h(
        'p',
        { class: 'detail' },
        `Default voice: ${a.voiceModelId ?? 'none'} · ${dateTime(a.createdAt)}`,
      ),
      actions,
      confirm,
      message,
    ),
  );
}

// ---------------------------------------------------------------- the Generate form's field

/**
 * The Generate form's avatar choice: a select of the account's avatars, or a pointer to this
 * section while there is none. It reads the avatars again whenever they change, choosing a
 * new one, and stops listening once the form has replaced it.
 */
export async function avatarField() {
  const field = h('div', { id: 'avatar-field' });
  const fill = async (chosen) => {
    const { listAvatars } = await api('{ listAvatars(first: 100) { nodes { avatarId name } } }');
    const keep = chosen ?? field.querySelector('select')?.value;
    if (listAvatars.nodes.length === 0) {
      field.replaceChildren(
        h(
          'p',
          { class: 'notice info' },
          'You have no avatar yet: ',
          h('a', { href: '#avatars' }, 'create one from a portrait'),
          ', then choose it here.',
        ),
      );
      return;
    }
    const select = h(
      'select',
      { name: 'avatarId', required: true },
      listAvatars.nodes.map((a) =>
        h('option', { value: a.avatarId, selected: a.avatarId === keep }, a.name),
      ),
    );
    field.replaceChildren(h('label', {}, 'Avatar', select));
  };
  const onChange = (event) => {
    if (!field.isConnected) return document.removeEventListener(changed, onChange);
    fill(event.detail ?? undefined).catch((error) =>
      field.replaceChildren(h('p', { role: 'alert' }, refusalText(error))),
    );
  };
  document.addEventListener(changed, onChange);
  await fill();
  return field;
}
