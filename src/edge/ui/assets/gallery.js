// The console's gallery (issue 33): the account's generations, newest first, as cards
// (content-card.js), filtered by kind and by state, a page at a time ("Show more" follows the
// connection's cursor). A queued or running one can be cancelled; a finished one deleted after
// a confirmation, its files with it. What the page shows after each change is what the server
// answers: a cancelled card is read again, a deleted one leaves the list. The account's task
// updates (`myTaskUpdates`) keep the cards of unfinished generations current: the progress
// in place, and a card read again when its state changes.

import { api } from './client.js';
import { contentCard, contentFields, stateText } from './content-card.js';
import { act, confirmedDelete, h, refusalText, say } from './dom.js';
import { kinds } from './kinds.js';
import { liveClient } from './live.js';

const pageSize = 12;

const states = [
  ['', 'Any state'],
  ['queued', 'Queued'],
  ['running', 'Running'],
  ['finished', 'Finished (done, failed or cancelled)'],
];

/** The galleries on the page, by their root: a later render only reads the list again. */
const galleries = new WeakMap();

/**
 * Shows the gallery in `root`, or, when it is already there, reads its list again with the
 * filters as they are (after a generation finished, say).
 */
export async function renderHistory(root) {
  const existing = galleries.get(root);
  if (existing !== undefined) return existing.reload();
  const gallery = createGallery(root);
  galleries.set(root, gallery);
  return gallery.reload();
}

function select(name, label, options) {
  return h(
    'label',
    {},
    label,
    h(
      'select',
      { name },
      options.map(([value, text]) => h('option', { value }, text)),
    ),
  );
}

function createGallery(root) {
  const filters = h(
    'form',
    { id: 'gallery-filters', class: 'inline', 'aria-label': 'Show generations' },
    select('kind', 'Kind', [['', 'Every kind'], ...kinds.map(([kind, label]) => [kind, label])]),
    select('status', 'State', states),
  );
  const count = h('p', { id: 'gallery-count', class: 'detail', role: 'status' });
  const message = h('p', { id: 'gallery-message', tabindex: -1, hidden: true });
  const list = h('div', { id: 'gallery-list', class: 'gallery' });
  const more = h(
    'button',
    { type: 'button', id: 'gallery-more', class: 'secondary', hidden: true },
    'Show more',
  );
  root.replaceChildren(filters, count, message, list, more);

  let after = null;
  let shown = 0;
  let reading = 0;
  const filter = () => {
    const data = new FormData(filters);
    const chosen = {};
    for (const name of ['kind', 'status']) if (data.get(name)) chosen[name] = data.get(name);
    return chosen;
  };
  const tell = (hasMore) => {
    const filtered = Object.keys(filter()).length > 0;
    count.textContent =
      shown === 0
        ? filtered
          ? 'No generations match these filters.'
          : 'Nothing generated yet.'
        : `${shown} shown${hasMore ? ', more to show' : ''}.`;
  };
  /** One page after `after`; a page answered after a newer read began is dropped. */
  const read = async (fresh) => {
    const ticket = ++reading;
    const { listContents: page } = await api(
      `query ($filter: ContentFilter, $first: Int, $after: String) {
        listContents(filter: $filter, first: $first, after: $after) {
          nodes { ${contentFields} } pageInfo { hasNextPage endCursor } } }`,
      { filter: filter(), first: pageSize, after: fresh ? null : after },
    );
    if (ticket !== reading) return;
    const cards = page.nodes.map((c) => card(c));
    if (fresh) {
      list.replaceChildren(...cards);
      shown = 0;
    } else list.append(...cards);
    shown += cards.length;
    after = page.pageInfo.endCursor;
    more.hidden = !page.pageInfo.hasNextPage;
    tell(page.pageInfo.hasNextPage);
  };
  const reload = () => read(true);

  /** A card with its actions; `replace` swaps a card for the generation as read again. */
  const card = (content) => contentCard(content, actionsOf(content));
  const replace = (old, content, focus) => {
    const fresh = card(content);
    // A live update may have replaced the card meanwhile: replace the one shown now.
    const shownNow = list.querySelector(`article.content[data-content-id="${content.contentId}"]`);
    (shownNow ?? old).replaceWith(fresh);
    if (focus !== undefined) fresh.querySelector(focus)?.focus();
  };
  const removeCard = (element) => {
    element.remove();
    shown -= 1;
    tell(!more.hidden);
  };

  const actionsOf = (content) => {
    const note = h('p', { hidden: true });
    const unfinished = content.task.status !== 'finished';
    const box = h('div', { class: 'card-actions' });
    if (unfinished) {
      const cancel = h(
        'button',
        { type: 'button', class: 'secondary', 'data-action': 'cancel' },
        'Cancel',
      );
      cancel.addEventListener('click', () =>
        act(cancel, note, async () => {
          await api('mutation ($id: ID!) { cancelTask(taskId: $id) { taskId } }', {
            id: content.task.taskId,
          });
          const { getContent } = await api(
            `query ($id: ID!) { getContent(contentId: $id) { ${contentFields} } }`,
            { id: content.contentId },
          );
          replace(box.closest('article'), getContent, '[data-action=delete]');
          say(message, 'Cancelled: its credits are refunded.', 'status');
        }),
      );
      box.append(h('p', { class: 'actions' }, cancel), note);
      return box;
    }
    const { actions, confirm } = confirmedDelete({
      question:
        'Delete this generation and its files? Its download links stop working. What it cost is not refunded.',
      message: note,
      remove: async () => {
        await api('mutation ($id: ID!) { deleteContent(contentId: $id) }', {
          id: content.contentId,
        });
        removeCard(box.closest('article'));
        say(message, 'The generation is deleted.', 'status');
        message.focus();
      },
    });
    box.append(actions, confirm, note);
    return box;
  };

  /** A task update of the account: the card it concerns, if shown, made current. */
  const update = async (task) => {
    const shownCard = list.querySelector(`article.content[data-task-id="${task.taskId}"]`);
    if (shownCard === null) return;
    if (shownCard.dataset.status === task.status) {
      const state = shownCard.querySelector('.state');
      if (state !== null) state.textContent = stateText(task);
      return;
    }
    const { getContent } = await api(
      `query ($id: ID!) { getContent(contentId: $id) { ${contentFields} } }`,
      { id: shownCard.dataset.contentId },
    );
    // Read again meanwhile (a filter, a reload): that card is gone, or already current.
    if (shownCard.isConnected) replace(shownCard, getContent);
  };
  liveClient().subscribe(
    { query: 'subscription { myTaskUpdates { taskId status progress finishCode } }' },
    {
      next: ({ data }) => {
        if (data?.myTaskUpdates) update(data.myTaskUpdates).catch(() => {});
      },
      error: () => {},
      complete: () => {},
    },
  );

  filters.addEventListener('change', () => {
    say(message, '');
    reload().catch((error) => say(message, refusalText(error)));
  });
  filters.addEventListener('submit', (event) => event.preventDefault());
  more.addEventListener('click', () => {
    say(message, '');
    const before = list.children.length;
    read(false)
      .then(() => {
        // The first new card, for a keyboard that goes on from there.
        const first = list.children[before];
        if (first === undefined) return;
        first.tabIndex = -1;
        first.focus();
      })
      .catch((error) => say(message, refusalText(error)));
  });
  return { reload };
}

/** Runs a change from a button: the button off meanwhile, a refusal said in `note`. */
async function _act(button, note, change) {
  say(note, '');
  button.disabled = true;
  try {
    await change();
  } catch (error) {
    say(note, refusalText(error));
    button.disabled = false;
  }
}
