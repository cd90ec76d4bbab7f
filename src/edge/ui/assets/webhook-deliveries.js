// An endpoint's deliveries in the console's Webhooks section: the newest with their attempts,
// Replay for one (the same webhook-id), and "Send again since" for every delivery from a time
// on (replayWebhookDeliveries), e.g. after the receiver was down.

import { api } from './client.js';
import { act, dateTime, formErrors, h, refusalText, say, table } from './dom.js';

const attemptText = (a) =>
  [
    dateTime(a.at),
    a.statusCode === null ? 'no answer' : `HTTP ${a.statusCode}`,
    `${a.latencyMs} ms`,
    a.error,
  ]
    .filter(Boolean)
    .join(' · ');

/** An endpoint's newest deliveries, read when the disclosure is opened, each with Replay. */
export function deliveriesPanel(endpoint) {
  const body = h('div', { class: 'deliveries' });
  const message = h('p', { hidden: true });
  const reload = h('button', { type: 'button', class: 'secondary' }, 'Read them again');
  const load = async () => {
    const { listWebhookDeliveries: deliveries } = await api(
      `query ($id: ID!) { listWebhookDeliveries(endpointId: $id, first: 20) {
        id eventType state createdAt deliveredAt nextAttemptAt
        attempts { at statusCode latencyMs error } } }`,
      { id: endpoint.id },
    );
    body.replaceChildren(
      table(
        'The newest deliveries, newest first',
        ['Created', 'Event', 'State', 'Attempts', 'Send again'],
        deliveries.map((d) => [
          dateTime(d.createdAt),
          d.eventType,
          h(
            'span',
            { 'data-state': d.state },
            d.state,
            d.nextAttemptAt ? `, next try ${dateTime(d.nextAttemptAt)}` : '',
          ),
          d.attempts.length === 0
            ? 'none yet'
            : h(
                'ol',
                { class: 'attempts' },
                d.attempts.map((a) => h('li', {}, attemptText(a))),
              ),
          replayButton(d, message, load),
        ]),
        { 'data-deliveries-of': endpoint.id },
        'nothing sent yet.',
      ),
    );
  };
  const panel = h(
    'details',
    { class: 'deliveries-panel' },
    h('summary', {}, 'Recent deliveries'),
    reload,
    message,
    body,
    replaySinceForm(endpoint, load),
  );
  const read = () => {
    say(message, '');
    load().catch((error) => say(message, refusalText(error)));
  };
  panel.addEventListener('toggle', () => {
    if (panel.open) read();
  });
  reload.addEventListener('click', read);
  return panel;
}

function replayButton(delivery, message, load) {
  const button = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      'data-delivery-id': delivery.id,
      'aria-label': `Replay the ${delivery.eventType} delivery of ${dateTime(delivery.createdAt)}`,
    },
    'Replay',
  );
  button.addEventListener('click', () =>
    act(button, message, async () => {
      await api('mutation ($id: ID!) { replayWebhookDelivery(deliveryId: $id) }', {
        id: delivery.id,
      });
      await load();
      say(message, 'Sent again, with the same webhook-id.', 'status');
    }),
  );
  return button;
}

/**
 * "Send again every delivery since": a time in the person's own zone (datetime-local), sent as
 * an instant. Each delivery goes again with its own webhook-id, so a receiver that already took
 * one can tell.
 */
function replaySinceForm(endpoint, load) {
  const id = `replay-since-${endpoint.id}`;
  const since = h('input', { type: 'datetime-local', name: 'since', required: true, step: 1 });
  const message = h('p', { hidden: true });
  const submit = h('button', { type: 'submit', class: 'secondary' }, 'Send them again');
  const form = h(
    'form',
    { id, class: 'inline replay-since', novalidate: true },
    h('label', {}, 'Every delivery since', since),
    submit,
    message,
  );
  const errors = formErrors(form, message);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    errors.clear();
    const at = new Date(since.value);
    if (since.value === '' || Number.isNaN(at.getTime())) {
      errors.show({ message: 'Choose a date and time.', extensions: { field: 'since' } });
      return;
    }
    if (at.getTime() > Date.now()) {
      errors.show({ message: 'Choose a time in the past.', extensions: { field: 'since' } });
      return;
    }
    submit.disabled = true;
    try {
      const { replayWebhookDeliveries: count } = await api(
        'mutation ($id: ID!, $since: DateTime!) { replayWebhookDeliveries(endpointId: $id, since: $since) }',
        { id: endpoint.id, since: at.toISOString() },
      );
      await load();
      say(
        message,
        count === 0
          ? 'Nothing was sent since then.'
          : `${count} ${count === 1 ? 'delivery' : 'deliveries'} sent again.`,
        'status',
      );
    } catch (error) {
      errors.show(error);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}
