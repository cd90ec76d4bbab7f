// The console's gallery of the account's generations: a card per content with what it was
// asked, its state and price, its media to view or play, and a download link.

import { api } from './client.js';
import { dateTime, h } from './dom.js';
import { kindLabel } from './kinds.js';

export const contentFields = `contentId kind modelId createdAt creditsCharged creditsRefunded input
  task { status finishCode finishMessage }
  media { mediaId kind mimeType width height durationMs download { url expiresAt } }`;

function mediaView(media) {
  const url = media.download.url;
  if (media.kind === 'image') {
    return h('img', {
      src: url,
      alt: `Generated image, ${media.width} × ${media.height}`,
      loading: 'lazy',
      width: media.width,
      height: media.height,
    });
  }
  if (media.kind === 'audio') return h('audio', { controls: true, preload: 'metadata', src: url });
  return h('video', { controls: true, preload: 'metadata', src: url, width: media.width });
}

/** What a generation was asked with, in words: its prompt, text or script. */
function wordsOf(input) {
  const words = input?.prompt ?? input?.text ?? input?.script;
  return typeof words === 'string' && words !== '' ? words : undefined;
}

export function contentCard(content) {
  const { task } = content;
  const words = wordsOf(content.input);
  const state =
    task.status === 'finished'
      ? task.finishCode === 0
        ? 'finished'
        : `failed (code ${task.finishCode})`
      : task.status;
  return h(
    'article',
    { class: 'content', 'data-content-id': content.contentId },
    h('h3', {}, `${kindLabel[content.kind] ?? content.kind} · ${content.modelId}`),
    h(
      'p',
      { class: 'detail' },
      `${dateTime(content.createdAt)} · ${state} · ${content.creditsCharged} credits`,
      content.creditsRefunded ? ` (${content.creditsRefunded} refunded)` : '',
    ),
    words === undefined ? null : h('blockquote', { class: 'prompt' }, words),
    task.finishCode && task.finishMessage ? h('p', { class: 'detail' }, task.finishMessage) : null,
    content.media.map((m) =>
      h(
        'figure',
        {},
        mediaView(m),
        h(
          'figcaption',
          {},
          h('a', { href: m.download.url, download: true }, `Download ${m.mimeType}`),
        ),
      ),
    ),
  );
}

export async function renderHistory(root) {
  const { listContents } = await api(`{ listContents(first: 12) { nodes { ${contentFields} } } }`);
  root.replaceChildren(
    ...(listContents.nodes.length
      ? listContents.nodes.map(contentCard)
      : [h('p', {}, 'Nothing generated yet.')]),
  );
}
