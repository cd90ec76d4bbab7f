// The console's Elements section (issue 33): the elements a generation can put in a picture or
// a scene (listElements, by kind: the public library, then the account's own), a form that
// makes one from an image (the upload step of uploads.js, then createElement), and delete
// after a confirmation (deleteElement, own elements only). The Generate form's image and video
// fields pick elements through elementsField, which follows every change without a reload.

import { api } from './client.js';
import { confirmedDelete, dateTime, formErrors, h, refusalText, say } from './dom.js';
import { asFieldError, downloadUrls, imageField, uploadChosen } from './uploads.js';

/** Sent on `document` after an element is made or deleted. */
const changed = 'atelier:elements-changed';
const pageSize = 50;

/** [GraphQL value, words] of ElementKind. */
const elementKinds = [
  ['character', 'Character'],
  ['object', 'Object'],
  ['style', 'Style'],
  ['scene', 'Scene'],
];
const kindWords = Object.fromEntries(elementKinds);

const elementFields = 'elementId kind name description public previewMediaId createdAt';

export async function renderElements(root) {
  const view = {
    message: h('p', { id: 'elements-message', tabindex: -1, hidden: true }),
    list: h('div', { id: 'element-list' }),
    kind: h(
      'select',
      { id: 'element-kind-filter' },
      h('option', { value: '' }, 'Every kind'),
      elementKinds.map(([value, words]) => h('option', { value }, words)),
    ),
  };
  view.kind.addEventListener('change', () =>
    showElements(view).catch((error) => say(view.message, refusalText(error))),
  );
  root.replaceChildren(
    h(
      'p',
      { class: 'detail' },
      'Elements are characters, objects, styles and scenes that image and video generations ' +
        'put in what they make. Add your own from a picture; the public library is everyone’s.',
    ),
    createForm(view),
    view.message,
    h('h3', {}, 'Elements you can use'),
    h('label', {}, 'Show', view.kind),
    view.list,
  );
  await showElements(view);
}

function createForm(view) {
  const submit = h('button', { type: 'submit' }, 'Add the element');
  const message = h('p', { hidden: true });
  const form = h(
    'form',
    { id: 'element-form', novalidate: true },
    h('h3', {}, 'Add an element'),
    h(
      'label',
      {},
      'Kind',
      h(
        'select',
        { name: 'kind', required: true },
        elementKinds.map(([value, words]) => h('option', { value }, words)),
      ),
    ),
    h('label', {}, 'Name', h('input', { name: 'name', required: true, maxlength: 100 })),
    h('label', {}, 'Description', h('textarea', { name: 'description', rows: 2 })),
    imageField('mediaId', 'Picture', { hint: 'A PNG, JPEG, WebP or GIF image.' }),
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
      return errors.show({ message: 'Give the element a name.', extensions: { field: 'name' } });
    }
    if (form.elements.namedItem('mediaId').files.length === 0) {
      return errors.show({ message: 'Choose a picture.', extensions: { field: 'mediaId' } });
    }
    submit.disabled = true;
    try {
      const mediaId = await uploadChosen(form, 'mediaId');
      const description = String(data.get('description') ?? '').trim() || undefined;
      const { createElement: element } = await api(
        `mutation ($input: CreateElementInput!) { createElement(input: $input) { elementId name } }`,
        { input: { kind: String(data.get('kind')), name, description, mediaId } },
      );
      form.reset();
      await showElements(view);
      document.dispatchEvent(new CustomEvent(changed));
      say(view.message, `${element.name} is added: pick it under Generate.`, 'status');
      view.message.focus();
    } catch (error) {
      errors.show(asFieldError(error, 'mediaId'));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

/** Every element of `kind` (all kinds when null): the library's, then the account's own. */
async function allElements(kind) {
  const found = [];
  let after = null;
  for (;;) {
    const { listElements: page } = await api(
      `query ($kind: ElementKind, $first: Int, $after: String) {
        listElements(kind: $kind, first: $first, after: $after) {
          nodes { ${elementFields} } pageInfo { hasNextPage endCursor } } }`,
      { kind, first: pageSize, after },
    );
    found.push(...page.nodes);
    if (!page.pageInfo.hasNextPage) return found;
    after = page.pageInfo.endCursor;
  }
}

async function showElements(view) {
  const elements = await allElements(view.kind.value || null);
  const own = elements.filter((e) => !e.public);
  const previews = await downloadUrls(own.map((e) => e.previewMediaId).filter(Boolean));
  view.list.replaceChildren(
    elements.length === 0
      ? h('p', { id: 'no-elements' }, 'No elements of this kind.')
      : h(
          'ul',
          { class: 'media-list' },
          elements.map((e) => elementItem(view, e, previews.get(e.previewMediaId))),
        ),
  );
}

function elementItem(view, e, previewUrl) {
  const titleId = `element-${e.elementId}-title`;
  const body = [
    previewUrl === undefined
      ? null
      : h('img', { class: 'thumb', src: previewUrl, alt: `Picture of ${e.name}` }),
    h(
      'h4',
      { id: titleId },
      e.name,
      ' ',
      h('span', { class: 'tag' }, e.public ? 'library' : 'yours'),
    ),
    h(
      'p',
      { class: 'detail' },
      kindWords[e.kind] ?? e.kind,
      e.description ? ` · ${e.description}` : '',
      e.public ? '' : ` · ${dateTime(e.createdAt)}`,
    ),
  ];
  return h(
    'li',
    { class: 'media-item', 'data-element-id': e.elementId },
    h('article', { 'aria-labelledby': titleId }, body, e.public ? null : deleteControls(view, e)),
  );
}

function deleteControls(view, e) {
  const message = h('p', { hidden: true });
  const { actions, confirm } = confirmedDelete({
    question: `Delete ${e.name}? Generations already submitted with it still run.`,
    message,
    remove: async () => {
      await api('mutation ($id: ID!) { deleteElement(elementId: $id) }', { id: e.elementId });
      await showElements(view);
      document.dispatchEvent(new CustomEvent(changed));
      say(view.message, `${e.name} is deleted.`, 'status');
      view.message.focus();
    },
  });
  return [actions, confirm, message];
}

// ---------------------------------------------------------------- the Generate form's field

/**
 * The Generate form's elements: a box per element the account can use, at most
 * `caps.maxElements` of them ticked; nothing for a model that takes none. It reads the
 * elements again whenever they change, keeping what was ticked.
 */
export async function elementsField(caps) {
  const most = caps.maxElements ?? 0;
  if (most === 0) return null;
  const field = h('fieldset', { name: 'elementIds', id: 'elements-field' });
  const fill = async () => {
    const ticked = new Set([...field.querySelectorAll('input:checked')].map((box) => box.value));
    const elements = await allElements(null);
    field.replaceChildren(
      h('legend', {}, `Elements (up to ${most})`),
      elements.length === 0
        ? h('p', { class: 'detail' }, 'No elements yet.')
        : h(
            'div',
            { class: 'element-choices' },
            elements.map((e) =>
              h(
                'label',
                { class: 'check' },
                h('input', {
                  type: 'checkbox',
                  name: 'elementId',
                  value: e.elementId,
                  checked: ticked.has(e.elementId),
                }),
                `${e.name} (${kindWords[e.kind] ?? e.kind}${e.public ? '' : ', yours'})`,
              ),
            ),
          ),
    );
  };
  const onChange = () => {
    if (!field.isConnected) return document.removeEventListener(changed, onChange);
    fill().catch((error) => field.append(h('p', { role: 'alert' }, refusalText(error))));
  };
  document.addEventListener(changed, onChange);
  await fill();
  return field;
}

/** The ticked elements of the Generate form, or undefined when none is. */
export function elementIdsOf(form) {
  const ids = new FormData(form).getAll('elementId').map(String);
  return ids.length === 0 ? undefined : ids;
}
