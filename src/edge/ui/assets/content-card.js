// One generation as a card, in the gallery (gallery.js) and as the Generate section's result
// (generate.js): what it was asked (prompt, text or script, and the settings), its state and
// price, its media to view or play, each with a download link.

import { dateTime, h } from './dom.js';
import { kindLabel } from './kinds.js';

export const contentFields = `contentId kind modelId createdAt creditsCharged creditsRefunded input
  task { taskId status progress finishCode finishMessage }
  media { mediaId kind mimeType width height durationMs download { url expiresAt } }`;

const mediaWords = { image: 'image', audio: 'audio', video: 'video' };

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

const present = (value) => value !== undefined && value !== null && value !== '';

/** The settings a generation was made with, from its stored input: [label, value] pairs. */
function settingsOf(input) {
  if (input === null || typeof input !== 'object') return [];
  const i = input;
  const rows = [
    ['Size', present(i.width) && present(i.height) ? `${i.width} × ${i.height}` : null],
    ['Aspect ratio', i.aspectRatio],
    ['Resolution', i.resolution],
    ['Duration', present(i.durationSeconds) ? `${i.durationSeconds} s` : null],
    ['Frame rate', present(i.fps) ? `${i.fps} fps` : null],
    ['Format', typeof i.format === 'string' ? i.format.toUpperCase() : null],
    ['Count', i.count > 1 ? i.count : null],
    ['Voice', i.voiceModelId],
    ['Speed', i.speed],
    ['Pitch', i.pitch],
    ['Avatar', i.avatarId],
    ['Not wanted', i.negativePrompt],
    ['Seed', i.seed],
  ];
  return rows.filter(([, value]) => present(value));
}

/** "finished", "cancelled", "failed (code 1)", "running, 40 %", "queued". */
export function stateText(task) {
  if (task.status === 'running') return `running, ${Math.round((task.progress ?? 0) * 100)} %`;
  if (task.status !== 'finished') return task.status;
  if (task.finishCode === 0) return 'finished';
  if (task.finishCode === 2) return 'cancelled';
  return `failed (code ${task.finishCode})`;
}

/**
 * A card for one generation. `actions`, if given, is a node of buttons that act on it (the
 * gallery's Cancel or Delete), placed after what it shows.
 */
export function contentCard(content, actions = null) {
  const { task } = content;
  const words = wordsOf(content.input);
  const settings = settingsOf(content.input);
  const titleId = `content-${content.contentId}-title`;
  const refunded = content.creditsRefunded ? ` (${content.creditsRefunded} refunded)` : '';
  const credits = `${content.creditsCharged} credit${content.creditsCharged === 1 ? '' : 's'}`;
  return h(
    'article',
    {
      class: 'content',
      'data-content-id': content.contentId,
      'data-task-id': task.taskId,
      'data-status': task.status,
      'aria-labelledby': titleId,
    },
    h('h3', { id: titleId }, `${kindLabel[content.kind] ?? content.kind} · ${content.modelId}`),
    h(
      'p',
      { class: 'detail' },
      `${dateTime(content.createdAt)} · `,
      h('span', { class: 'state' }, stateText(task)),
      ` · ${credits}${refunded}`,
    ),
    words === undefined ? null : h('blockquote', { class: 'prompt' }, words),
    settings.length === 0
      ? null
      : h(
          'dl',
          { class: 'settings' },
          settings.flatMap(([label, value]) => [h('dt', {}, label), h('dd', {}, String(value))]),
        ),
    task.finishCode && task.finishMessage ? h('p', { class: 'detail' }, task.finishMessage) : null,
    content.media.map((m, index) =>
      h(
        'figure',
        {},
        mediaView(m),
        h(
          'figcaption',
          {},
          h(
            'a',
            { href: m.download.url, download: true },
            `Download the ${mediaWords[m.kind] ?? 'file'}`,
            content.media.length > 1 ? ` ${index + 1}` : '',
            ` (${m.mimeType})`,
          ),
        ),
      ),
    ),
    actions,
  );
}
