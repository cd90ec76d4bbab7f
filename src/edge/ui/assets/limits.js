// Spending limits of an API key or an MCP connection (issue 21), set, changed and removed from
// the console's API keys and AI agents sections (issue 33): credits per category per UTC day or
// month, and optionally the kinds and models it may use. The API replaces every limit at once
// (setApiKeyLimits, setMcpConnectionLimits), so the editor sends the whole set as the form
// shows it; the fields are named as the API names them in errors (`limits.credits[0].credits`),
// so a refusal lands next to the field it concerns.

import { dateTime, formErrors, h, say } from './dom.js';

/** What to read of a key's or connection's limits. */
export const limitFields = `limits { credits { category period credits spent remaining resetsAt }
  kinds modelIds }`;

/** " · spent 3 of 50 standard this day · only image": a credential's limits in its list line. */
export function limitText(limits) {
  if (limits === null) return '';
  const credits = limits.credits.map(
    (l) => ` · spent ${l.spent} of ${l.credits} ${l.category} this ${l.period}`,
  );
  const only = [...(limits.kinds ?? []), ...(limits.modelIds ?? [])];
  return credits.join('') + (only.length > 0 ? ` · only ${only.join(', ')}` : '');
}

const kinds = [
  ['image', 'Images'],
  ['video', 'Videos'],
  ['speech', 'Speech'],
  ['avatar', 'Avatar videos'],
];

/** An ID fit for an element's id: a client ID may hold any character. */
const idPart = (id) => String(id).replace(/[^A-Za-z0-9_-]/g, '-');

/**
 * A disclosure holding the limits form of one credential. `save(limits)` sends the limits
 * (null: none) and re-reads the list; a refusal is shown next to its field and changes nothing.
 */
export function limitsEditor({ id, name, limits, categories, save }) {
  const formId = `limits-${idPart(id)}`;
  const listId = `${formId}-categories`;
  const rows = h('div', { class: 'limit-rows' });
  const add = h('button', { type: 'button', class: 'secondary' }, 'Add a credit limit');
  const renumber = () => {
    [...rows.children].forEach((row, i) => {
      for (const control of row.querySelectorAll('[data-part]')) {
        control.name = `limits.credits[${i}].${control.dataset.part}`;
      }
    });
  };
  const row = (limit) => {
    const category = h('input', {
      'data-part': 'category',
      required: true,
      maxlength: 100,
      list: listId,
      autocomplete: 'off',
      value: limit?.category ?? categories[0] ?? 'standard',
    });
    const period = h(
      'select',
      { 'data-part': 'period' },
      h('option', { value: 'day', selected: limit?.period === 'day' }, 'per day (UTC)'),
      h('option', { value: 'month', selected: limit?.period === 'month' }, 'per month (UTC)'),
    );
    const credits = h('input', {
      'data-part': 'credits',
      type: 'number',
      min: 1,
      step: 1,
      required: true,
      inputmode: 'numeric',
      value: limit?.credits,
    });
    const item = h(
      'div',
      { class: 'limit-row' },
      h('label', {}, 'Category', category),
      h('label', {}, 'Period', period),
      h('label', {}, 'At most (credits)', credits),
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          onclick: () => {
            item.remove();
            renumber();
            add.focus();
          },
        },
        'Remove this limit',
      ),
      limit === undefined
        ? null
        : h(
            'p',
            { class: 'detail' },
            `Spent ${limit.spent} of ${limit.credits} ${limit.category} this ${limit.period}, ` +
              `${limit.remaining} left until ${dateTime(limit.resetsAt)}.`,
          ),
    );
    return item;
  };
  rows.append(...(limits?.credits ?? []).map(row));
  renumber();
  add.addEventListener('click', () => {
    const added = row(undefined);
    rows.append(added);
    renumber();
    added.querySelector('[data-part=credits]').focus();
  });

  const kindBoxes = kinds.map(([value, label]) =>
    h(
      'label',
      { class: 'check' },
      h('input', {
        type: 'checkbox',
        name: 'kind',
        value,
        checked: limits?.kinds?.includes(value) ?? false,
      }),
      label,
    ),
  );
  const models = h('input', {
    name: 'limits.modelIds',
    autocomplete: 'off',
    placeholder: 'e.g. mdl_sketch, mdl_voice',
    value: limits?.modelIds?.join(', '),
  });
  const submit = h('button', { type: 'submit' }, 'Save limits');
  const remove =
    limits === null
      ? null
      : h('button', { type: 'button', class: 'secondary' }, 'Remove every limit');
  const message = h('p', { hidden: true });
  const form = h(
    'form',
    { id: formId, novalidate: true, class: 'limits' },
    h(
      'datalist',
      { id: listId },
      categories.map((c) => h('option', { value: c })),
    ),
    h('fieldset', { name: 'limits.credits' }, h('legend', {}, 'Credits it may spend'), rows, add),
    h(
      'fieldset',
      { name: 'limits.kinds' },
      h('legend', {}, 'Kinds it may generate (none ticked: every kind)'),
      kindBoxes,
    ),
    h('label', {}, 'Only these model IDs, separated by commas (empty: every model)', models),
    h('p', { class: 'actions' }, submit, ' ', remove),
    message,
  );
  const errors = formErrors(form, message);

  const send = async (value, button) => {
    button.disabled = true;
    try {
      await save(value);
    } catch (error) {
      errors.show(error);
    } finally {
      button.disabled = false;
    }
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    errors.clear();
    const credits = [];
    for (const [i, item] of [...rows.children].entries()) {
      const part = (p) => item.querySelector(`[data-part=${p}]`).value;
      const amount = part('credits').trim();
      // Int is all GraphQL takes: a fraction would come back as a variable error, not a field's.
      // Empty is 0, which the server refuses next to the field like any amount out of range.
      const number = amount === '' ? 0 : Number(amount);
      if (!Number.isInteger(number)) {
        errors.show({
          extensions: { field: `limits.credits[${i}].credits` },
          message: 'must be a whole number',
        });
        return;
      }
      credits.push({ category: part('category').trim(), period: part('period'), credits: number });
    }
    const ticked = kindBoxes.map((l) => l.querySelector('input')).filter((c) => c.checked);
    const modelIds = models.value.split(/[\s,]+/).filter((m) => m !== '');
    const value =
      credits.length === 0 && ticked.length === 0 && modelIds.length === 0
        ? null
        : {
            credits,
            ...(ticked.length === 0 ? {} : { kinds: ticked.map((c) => c.value) }),
            ...(modelIds.length === 0 ? {} : { modelIds }),
          };
    return send(value, submit);
  });
  remove?.addEventListener('click', () => {
    errors.clear();
    return send(null, remove);
  });
  say(message, '');
  return h(
    'details',
    { class: 'limits-editor', 'data-limits-for': id },
    h(
      'summary',
      {},
      limits === null ? `Set spending limits of ${name}` : `Change limits of ${name}`,
    ),
    form,
  );
}

/** After the list was read again: the editor of `id` open again, its summary focused. */
export function reopenEditor(list, id) {
  const editor = [...list.querySelectorAll('details.limits-editor')].find(
    (d) => d.dataset.limitsFor === id,
  );
  if (editor === undefined) return;
  editor.open = true;
  editor.querySelector('summary').focus();
}
