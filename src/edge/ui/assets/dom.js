// DOM helpers of the console pages. Elements are built with createElement only: nothing the
// server or a person wrote is ever parsed as HTML.

import { forbidden } from './client.js';

/** h('p', { class: 'x' }, 'text', child): an element; attributes starting with "on" are listeners. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

export function section(id, title, ...children) {
  return h(
    'section',
    { id, 'aria-labelledby': `${id}-title`, class: 'panel' },
    h('h2', { id: `${id}-title` }, title),
    ...children,
  );
}

export function say(target, text, kind = 'alert') {
  target.replaceChildren(text);
  target.setAttribute('role', kind === 'alert' ? 'alert' : 'status');
  target.hidden = text === '';
}

export const dateTime = (iso) => (iso ? new Date(iso).toLocaleString() : '—');

/** What a refusal means to the person who met it; 110202 in words, the rest as the server said. */
export function refusalText(error) {
  if (error?.code === forbidden) return 'Only admin accounts can do this.';
  return error?.message ?? String(error);
}

/**
 * A form's errors where they belong: an error naming a field (`extensions.field`) next to that
 * control (aria-invalid, aria-describedby), anything else in the form's own message. An entry
 * of a list (`events[1]`, `limits.modelIds[0]`) goes next to the list's control, a fieldset or
 * input named for the list. `clear()` before each submit, so nothing stale stays on the page.
 */
export function formErrors(form, message) {
  const clear = () => {
    for (const note of form.querySelectorAll('.field-error')) note.remove();
    for (const control of form.querySelectorAll('[aria-invalid]')) {
      control.removeAttribute('aria-invalid');
      control.removeAttribute('aria-describedby');
    }
    say(message, '');
  };
  const controlOf = (field) => {
    if (typeof field !== 'string') return null;
    for (const name of [field, field.replace(/\[\d+\]$/, '')]) {
      const control = form.elements.namedItem(name);
      // A RadioNodeList (several controls of one name) names no single place.
      if (control instanceof HTMLElement) return control;
    }
    return null;
  };
  const show = (error) => {
    const problems = error?.extensions?.problems ?? [
      { field: error?.extensions?.field, message: error?.message },
    ];
    let placed = 0;
    for (const { field, message: text } of problems) {
      const control = controlOf(field);
      if (control === null) continue;
      const id = `${form.id}-${control.getAttribute('name')}-error`;
      const words = String(text).replace(`${field}: `, '');
      const existing = document.getElementById(id);
      if (existing !== null) {
        existing.append(`; ${words}`);
        continue;
      }
      control.setAttribute('aria-invalid', 'true');
      control.setAttribute('aria-describedby', id);
      control.after(h('span', { id, class: 'field-error', role: 'alert' }, words));
      if (placed++ === 0) {
        const target = control.matches('fieldset')
          ? control.querySelector('input, select, textarea')
          : control;
        target?.focus();
      }
    }
    if (placed === 0) say(message, refusalText(error));
  };
  return { clear, show };
}

/**
 * A table with a caption: `columns` are header texts, `rows` arrays of cells (text or nodes);
 * without rows, `empty` in words instead.
 */
export function table(caption, columns, rows, attributes = {}, empty = 'None.') {
  if (rows.length === 0) return h('p', { class: 'detail' }, `${caption}: ${empty}`);
  return h(
    'div',
    { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': caption },
    h(
      'table',
      attributes,
      h('caption', {}, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map((c) => h('th', { scope: 'col' }, c)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((cells) =>
          h(
            'tr',
            {},
            cells.map((c) => h('td', {}, c ?? '—')),
          ),
        ),
      ),
    ),
  );
}

/**
 * A table read a page at a time: `page(after)` answers `{ rows, pageInfo }`; "Show more" adds
 * the next page under the rows already shown. Resolves once the first page is in.
 */
export async function pagedTable(root, { caption, columns, page, empty, id }) {
  const body = h('tbody', {});
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Show more');
  const message = h('p', { hidden: true });
  let after = null;
  const load = async () => {
    const { rows, pageInfo } = await page(after);
    body.append(
      ...rows.map((cells) =>
        h(
          'tr',
          {},
          cells.map((c) => h('td', {}, c ?? '—')),
        ),
      ),
    );
    after = pageInfo.endCursor;
    more.hidden = !pageInfo.hasNextPage;
  };
  more.addEventListener('click', () => {
    say(message, '');
    load().catch((error) => say(message, refusalText(error)));
  });
  await load();
  root.replaceChildren(
    body.children.length === 0
      ? h('p', { id }, empty)
      : h(
          'div',
          { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': caption },
          h(
            'table',
            { id },
            h('caption', {}, caption),
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                columns.map((c) => h('th', { scope: 'col' }, c)),
              ),
            ),
            body,
          ),
        ),
    more,
    message,
  );
}

/** Runs a change from a button: the button off meanwhile, a refusal said in `message`. */
export async function act(button, message, change) {
  say(message, '');
  button.disabled = true;
  try {
    await change();
  } catch (error) {
    say(message, refusalText(error));
    button.disabled = false;
  }
}

/**
 * Delete after a confirmation: a Delete button (after `beside`, other buttons of the row) that,
 * pressed, gives way to `question` with "Yes, delete it" and "Keep it" (focused). "Keep it"
 * brings Delete back; "Yes" runs `remove`, whose refusal is said in `message`. Place both
 * returned elements where the row goes.
 */
export function confirmedDelete({ question, remove, message, beside = [] }) {
  const button = h(
    'button',
    { type: 'button', class: 'secondary', 'data-action': 'delete' },
    'Delete',
  );
  const actions = h('p', { class: 'actions' }, ...beside.flatMap((b) => [b, ' ']), button);
  const yes = h('button', { type: 'button', 'data-action': 'confirm-delete' }, 'Yes, delete it');
  const keep = h(
    'button',
    { type: 'button', class: 'secondary', 'data-action': 'keep' },
    'Keep it',
  );
  const confirm = h(
    'div',
    { class: 'confirm', hidden: true },
    h('p', {}, question),
    h('p', { class: 'actions' }, yes, ' ', keep),
  );
  button.addEventListener('click', () => {
    say(message, '');
    actions.hidden = true;
    confirm.hidden = false;
    keep.focus();
  });
  keep.addEventListener('click', () => {
    confirm.hidden = true;
    actions.hidden = false;
    button.focus();
  });
  yes.addEventListener('click', () => act(yes, message, remove));
  return { actions, confirm };
}
