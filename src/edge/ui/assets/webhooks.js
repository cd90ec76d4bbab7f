// The console's Webhooks section (issue 33): the account's endpoints (listWebhookEndpoints),
// each with its state, events and threshold; a form that adds one and shows its whsec_ secret
// once; enable, disable, change, rotate the secret (shown once), delete after a confirmation;
// each endpoint's newest deliveries with their attempts, and Replay. Also the one-off secret that
// signs deliveries to generations naming their own webhookUrl. After every change the list is
// read again, so what the page shows is what the server holds.

import { api } from './client.js';
import { act, confirmedDelete, dateTime, formErrors, h, say } from './dom.js';
import { deliveriesPanel } from './webhook-deliveries.js';

/** The events an endpoint may ask for: [GraphQL value, words, ticked on a new endpoint]. */
const events = [
  ['task_finished', 'A generation finished', true],
  ['task_failed', 'A generation failed', true],
  ['task_cancelled', 'A generation was cancelled', false],
  ['credits_low', 'A balance fell below the threshold', false],
  ['webhook_disabled', 'An endpoint was disabled', true],
];
const eventWords = Object.fromEntries(events.map(([value, words]) => [value, words]));

const endpointFields =
  'id url description events enabled creditsLowBelow disabledAt disabledReason createdAt';

/** Where the section keeps what every part of it shares. */
function sectionView() {
  return {
    secretBox: h('div', { id: 'webhook-secret', class: 'notice info', hidden: true }),
    message: h('p', { id: 'webhooks-message', tabindex: -1, hidden: true }),
    list: h('div', { id: 'webhook-list' }),
    oneOff: h('div', { id: 'one-off-webhook' }),
  };
}

export async function renderWebhooks(root) {
  const view = sectionView();
  root.replaceChildren(
    h(
      'p',
      { class: 'detail' },
      'Atelier POSTs what happens to your endpoints, signed as Standard Webhooks describes ' +
        '(webhook-id, webhook-timestamp and webhook-signature headers). A failed delivery is ' +
        'tried again for about a day; an endpoint that fails all that time is disabled.',
    ),
    createForm(view),
    view.secretBox,
    view.message,
    h('h3', {}, 'Your endpoints'),
    view.list,
    h('h3', {}, 'Generations that name their own webhookUrl'),
    view.oneOff,
  );
  await Promise.all([showEndpoints(view), showOneOff(view)]);
}

// ---------------------------------------------------------------- the secret, shown once

/** Shows a secret once; "I have saved it" hides it and calls `returnFocus`. */
function showSecret(view, secret, whose, note, returnFocus) {
  const value = h('output', { id: 'webhook-secret-value', class: 'secret' }, secret);
  const copied = h('span', { role: 'status', class: 'detail' });
  const copy = h('button', { type: 'button', id: 'webhook-secret-copy' }, 'Copy the secret');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(secret);
      copied.textContent = 'Copied.';
    } catch {
      // No clipboard permission: the secret selected, for the person's own copy keys.
      getSelection()?.selectAllChildren(value);
      copied.textContent = 'Selected: copy it with Ctrl+C (⌘C on a Mac).';
    }
  });
  const done = h('button', { type: 'button', class: 'secondary' }, 'I have saved it');
  done.addEventListener('click', () => {
    hideSecret(view);
    returnFocus();
  });
  view.secretBox.replaceChildren(
    h(
      'p',
      {},
      h('strong', {}, 'Shown once. '),
      `The signing secret of ${whose}: copy it now, it is not shown again. ${note}`,
    ),
    value,
    h('p', { class: 'actions' }, copy, ' ', done, ' ', copied),
  );
  view.secretBox.hidden = false;
  copy.focus();
}

function hideSecret(view) {
  view.secretBox.replaceChildren();
  view.secretBox.hidden = true;
}

// ---------------------------------------------------------------- forms

/** The event checkboxes in a fieldset named `events` (where the API's errors about them go). */
function eventChoices(chosen) {
  return h(
    'fieldset',
    { name: 'events' },
    h('legend', {}, 'Events to send'),
    events.map(([value, words, byDefault]) =>
      h(
        'label',
        { class: 'check' },
        h('input', {
          type: 'checkbox',
          name: 'event',
          value,
          checked: chosen === undefined ? byDefault : chosen.includes(value),
        }),
        `${words} (${value.replace('_', '.')})`,
      ),
    ),
  );
}

/** The endpoint a form describes, or a problem with a field the browser can judge alone. */
function endpointInput(form) {
  const field = (name) => form.elements.namedItem(name);
  const below = field('creditsLowBelow').value.trim();
  const threshold = below === '' ? undefined : Number(below);
  // Int is all GraphQL takes: a fraction would come back as a variable error, not a field's.
  if (threshold !== undefined && !Number.isInteger(threshold)) {
    return {
      problem: { extensions: { field: 'creditsLowBelow' }, message: 'must be a whole number' },
    };
  }
  return {
    input: {
      url: field('url').value.trim(),
      events: [...form.querySelectorAll('input[name=event]:checked')].map((c) => c.value),
      description: field('description').value,
      ...(threshold === undefined ? {} : { creditsLowBelow: threshold }),
    },
  };
}

function endpointFieldsOf(endpoint) {
  return [
    h(
      'label',
      {},
      'URL (https, reachable from the internet)',
      h('input', {
        name: 'url',
        type: 'url',
        required: true,
        maxlength: 2000,
        autocomplete: 'off',
        placeholder: 'https://example.com/atelier-events',
        value: endpoint?.url,
      }),
    ),
    eventChoices(endpoint?.events),
    h(
      'label',
      {},
      'Description (optional)',
      h('input', { name: 'description', maxlength: 200, value: endpoint?.description }),
    ),
    h(
      'label',
      {},
      'Send credits.low when a balance falls below (credits)',
      h('input', {
        name: 'creditsLowBelow',
        type: 'number',
        min: 1,
        step: 1,
        inputmode: 'numeric',
        value: endpoint?.creditsLowBelow ?? 100,
      }),
    ),
  ];
}

function createForm(view) {
  const submit = h('button', { type: 'submit' }, 'Add the endpoint');
  const message = h('p', { hidden: true });
  const form = h(
    'form',
    { id: 'webhook-form', novalidate: true },
    h('h3', {}, 'Add an endpoint'),
    endpointFieldsOf(undefined),
    submit,
    message,
  );
  const errors = formErrors(form, message);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    errors.clear();
    // A new request: the secret of an earlier one is no longer what this form is about.
    hideSecret(view);
    say(view.message, '');
    const { input, problem } = endpointInput(form);
    if (problem !== undefined) return errors.show(problem);
    submit.disabled = true;
    try {
      const { createWebhookEndpoint: created } = await api(
        `mutation ($input: CreateWebhookEndpointInput!) {
          createWebhookEndpoint(input: $input) { secret endpoint { id url } } }`,
        { input },
      );
      form.reset();
      await showEndpoints(view);
      showSecret(view, created.secret, created.endpoint.url, '', () =>
        focusIn(view, created.endpoint.id, '[data-action=toggle]'),
      );
    } catch (error) {
      errors.show(error);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

// ---------------------------------------------------------------- the endpoints

/** Reads the endpoints again; then focuses `focus` (a selector) in endpoint `id`, if given. */
async function showEndpoints(view, id, focus) {
  const { listWebhookEndpoints: endpoints } = await api(
    `{ listWebhookEndpoints { ${endpointFields} } }`,
  );
  view.list.replaceChildren(
    ...(endpoints.length === 0
      ? [h('p', { id: 'no-webhooks' }, 'No endpoints yet.')]
      : endpoints.map((e) => endpointItem(view, e))),
  );
  if (id !== undefined) focusIn(view, id, focus);
}

function focusIn(view, id, selector) {
  const item = [...view.list.children].find((child) => child.dataset.endpointId === id);
  item?.querySelector(selector)?.focus();
}

function endpointItem(view, e) {
  const titleId = `webhook-${e.id}-title`;
  const message = h('p', { hidden: true });
  const toggle = h(
    'button',
    { type: 'button', class: 'secondary', 'data-action': 'toggle' },
    e.enabled ? 'Disable' : 'Enable',
  );
  toggle.addEventListener('click', () =>
    act(toggle, message, async () => {
      await api(
        `mutation ($id: ID!, $enabled: Boolean!) {
          updateWebhookEndpoint(endpointId: $id, input: { enabled: $enabled }) { id } }`,
        { id: e.id, enabled: !e.enabled },
      );
      await showEndpoints(view, e.id, '[data-action=toggle]');
      say(
        view.message,
        e.enabled
          ? `${e.url} is disabled: events wait until it is enabled again.`
          : `${e.url} is enabled: what waited meanwhile is being sent.`,
        'status',
      );
    }),
  );
  const rotate = h(
    'button',
    { type: 'button', class: 'secondary', 'data-action': 'rotate' },
    'Rotate the secret',
  );
  rotate.addEventListener('click', () =>
    act(rotate, message, async () => {
      const { rotateWebhookSecret: rotated } = await api(
        'mutation ($id: ID!) { rotateWebhookSecret(endpointId: $id) { secret } }',
        { id: e.id },
      );
      say(view.message, '');
      showSecret(
        view,
        rotated.secret,
        e.url,
        'The old secret keeps signing beside it for 24 hours.',
        () => focusIn(view, e.id, '[data-action=rotate]'),
      );
      rotate.disabled = false;
    }),
  );
  const { actions, confirm } = confirmedDelete({
    question: `Delete ${e.url}? Nothing more is sent to it, its deliveries are no longer listed, and its secret stops working.`,
    message,
    beside: [toggle, rotate],
    remove: async () => {
      await api('mutation ($id: ID!) { deleteWebhookEndpoint(endpointId: $id) { id } }', {
        id: e.id,
      });
      await showEndpoints(view);
      say(view.message, `${e.url} is deleted.`, 'status');
      view.message.focus();
    },
  });
  return h(
    'article',
    { class: 'endpoint', 'data-endpoint-id': e.id, 'aria-labelledby': titleId },
    h(
      'h4',
      { id: titleId },
      e.url,
      ' ',
      h(
        'span',
        { class: `tag ${e.enabled ? 'state-up' : 'state-down'}` },
        e.enabled ? 'enabled' : 'disabled',
      ),
    ),
    e.enabled
      ? null
      : h(
          'p',
          { class: 'detail disabled-reason' },
          `${e.disabledReason ?? 'Disabled.'} Since ${dateTime(e.disabledAt)}; enabling it sends what waited meanwhile.`,
        ),
    h(
      'dl',
      {},
      h('dt', {}, 'Events'),
      h('dd', { class: 'events' }, e.events.map((v) => eventWords[v] ?? v).join(', ')),
      e.description === '' ? null : [h('dt', {}, 'Description'), h('dd', {}, e.description)],
      h('dt', {}, 'credits.low below'),
      h('dd', { class: 'threshold' }, `${e.creditsLowBelow} credits`),
      h('dt', {}, 'Added'),
      h('dd', {}, dateTime(e.createdAt)),
    ),
    actions,
    confirm,
    message,
    editPanel(view, e),
    deliveriesPanel(e),
  );
}

/** Change the URL, events, description or threshold of an endpoint. */
function editPanel(view, e) {
  const submit = h('button', { type: 'submit' }, 'Save the changes');
  const message = h('p', { hidden: true });
  const form = h(
    'form',
    { id: `webhook-edit-${e.id}`, novalidate: true },
    endpointFieldsOf(e),
    submit,
    message,
  );
  const errors = formErrors(form, message);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    errors.clear();
    const { input, problem } = endpointInput(form);
    if (problem !== undefined) return errors.show(problem);
    submit.disabled = true;
    try {
      await api(
        `mutation ($id: ID!, $input: UpdateWebhookEndpointInput!) {
          updateWebhookEndpoint(endpointId: $id, input: $input) { id } }`,
        { id: e.id, input },
      );
      await showEndpoints(view, e.id, 'details.edit summary');
      say(view.message, `The changes to ${input.url} are saved.`, 'status');
    } catch (error) {
      errors.show(error);
      submit.disabled = false;
    }
  });
  return h('details', { class: 'edit' }, h('summary', {}, 'Change it'), form);
}

// ---------------------------------------------------------------- the one-off secret

async function showOneOff(view) {
  const { oneOffWebhookEndpoint: e } = await api('{ oneOffWebhookEndpoint { id } }');
  const message = h('p', { hidden: true });
  const button = h(
    'button',
    { type: 'button', class: 'secondary', id: 'one-off-rotate' },
    e === null ? 'Make the secret' : 'Rotate the secret',
  );
  button.addEventListener('click', () =>
    act(button, message, async () => {
      const { rotateOneOffWebhookSecret: made } = await api(
        'mutation { rotateOneOffWebhookSecret { secret } }',
      );
      say(view.message, '');
      await showOneOff(view);
      showSecret(
        view,
        made.secret,
        'deliveries to generations’ own webhookUrl',
        e === null ? '' : 'The old secret keeps signing beside it for 24 hours.',
        () => document.getElementById('one-off-rotate')?.focus(),
      );
    }),
  );
  view.oneOff.replaceChildren(
    ...[
      h(
        'p',
        { class: 'detail' },
        e === null
          ? 'A generation may name its own webhookUrl; what is sent there is signed with a secret of its own, which you make here first.'
          : 'A generation may name its own webhookUrl; what is sent there is signed with your one-off secret. Rotating it shows a new one once.',
      ),
      h('p', {}, button),
      message,
      e === null ? null : deliveriesPanel(e),
    ].filter((child) => child !== null),
  );
}
