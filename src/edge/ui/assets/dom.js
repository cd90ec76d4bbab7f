// DOM helpers of the console pages. Elements are built with createElement only: nothing the
// server or a person wrote is ever parsed as HTML.

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
