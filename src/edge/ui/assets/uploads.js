// The console's one upload step, shared by avatars.js (a portrait), elements.js (an element's
// picture) and the Generate form (a video's starting image, an avatar video's recording): a
// file field that accepts what Atelier takes, a check in the browser, then createUpload and a
// PUT of the bytes to the uploadUrl it answers — Atelier's own /uploads route, or a presigned URL on the object store
// (the page's Content-Security-Policy allows that store's origin). Progress shows under the
// field; a refusal shows next to it, whichever step refused.

import { ApiError, api } from './client.js';
import { formErrors, h } from './dom.js';

/** What createUpload takes, by kind (upload-checks.ts); the bytes are checked again there. */
const types = {
  image: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'],
  audio: ['audio/mpeg', 'audio/wav', 'audio/ogg', 'audio/opus', 'audio/flac'],
};
const typeWords = { image: 'an image', audio: 'an audio file' };
const typeNames = { image: 'PNG, JPEG, WebP or GIF', audio: 'MP3, WAV, Ogg, Opus or FLAC' };

/** Fields of the upload steps' own refusals, which all describe the file the person chose. */
const uploadFields = ['mimeType', 'bytes', 'filename'];

/**
 * A file field for one image: `name` is the field the upload's media id goes to in the
 * mutation (`portraitMediaId`, `mediaId`, `imageMediaId`), so a refusal naming it lands here.
 */
export function imageField(name, label, options = {}) {
  return fileField('image', name, label, options);
}

/** A file field for one recording (`audioMediaId`): as imageField, for audio. */
export function audioField(name, label, options = {}) {
  return fileField('audio', name, label, options);
}

function fileField(kind, name, label, { required = true, hint }) {
  const input = h('input', {
    type: 'file',
    name,
    accept: types[kind].join(','),
    'data-kind': kind,
    required,
    'aria-describedby': hint === undefined ? undefined : `${name}-hint`,
  });
  const progress = h('progress', {
    class: 'upload-progress',
    max: 1,
    value: 0,
    hidden: true,
    'aria-label': `${label}: upload progress`,
  });
  return h(
    'div',
    { class: 'upload' },
    h('label', {}, label, input),
    hint === undefined ? null : h('p', { id: `${name}-hint`, class: 'detail hint' }, hint),
    progress,
  );
}

/** An error of the file field `name`: what formErrors (dom.js) places next to it. */
function fieldError(name, message) {
  return new ApiError(message, '120001', { field: name });
}

/**
 * The chosen file of field `name` uploaded; resolves to its media id, or null when none was
 * chosen. Every refusal — the browser's check, createUpload's, the PUT's — is an error naming
 * `name`. A file already uploaded from this page is not sent again.
 */
export async function uploadChosen(form, name) {
  const input = form.elements.namedItem(name);
  const file = input?.files?.[0];
  if (file === undefined) return null;
  const known = uploaded.get(file);
  if (known !== undefined) return known;
  const kind = input.dataset.kind ?? 'image';
  if (!types[kind].includes(file.type)) {
    throw fieldError(
      name,
      `${file.name} is not ${typeWords[kind]} Atelier takes: choose a ${typeNames[kind]} file.`,
    );
  }
  let created;
  try {
    ({ createUpload: created } = await api(
      `mutation ($input: CreateUploadInput!) {
        createUpload(input: $input) { mediaId uploadUrl expiresAt } }`,
      { input: { kind, mimeType: file.type, bytes: file.size, filename: file.name } },
    ));
  } catch (error) {
    throw asFieldError(error, name, uploadFields);
  }
  const progress = input.closest('.upload')?.querySelector('progress');
  await put(created.uploadUrl, file, progress, name);
  uploaded.set(file, created.mediaId);
  return created.mediaId;
}
const uploaded = new WeakMap();

/**
 * A refusal of `fields` (or of the upload step as a whole) told as one of field `name`, with
 * the server's words; the size refusal ("bytes: must be from 1 to N") in a person's words.
 */
export function asFieldError(error, name, fields = [name]) {
  if (!(error instanceof ApiError)) return error;
  const problems = error.extensions?.problems ?? [
    { field: error.extensions?.field, message: error.message },
  ];
  const ours = problems.filter((p) => fields.includes(p.field));
  if (ours.length === 0) return error;
  const words = ours.map(({ field, message }) => {
    const text = String(message).replace(`${field}: `, '');
    const most = field === 'bytes' ? /from 1 to (\d+)/.exec(text)?.[1] : undefined;
    return most === undefined
      ? text
      : `The file is too large: at most ${Number(most).toLocaleString('en')} bytes.`;
  });
  return fieldError(name, words.join('; '));
}

/**
 * PUTs the file's bytes to the signed URL. XMLHttpRequest rather than fetch: only it reports
 * the progress of a request body. Atelier answers a refusal with a JSON error; an object store
 * checks nothing but the signature and the length (the bytes are checked at first use).
 */
function put(url, file, progress, name) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('PUT', url);
    if (progress) {
      progress.value = 0;
      progress.hidden = false;
      request.upload.addEventListener('progress', (event) => {
        if (event.lengthComputable) progress.value = event.loaded / event.total;
      });
    }
    const done = () => {
      if (progress) progress.hidden = true;
    };
    request.addEventListener('load', () => {
      done();
      if (request.status >= 200 && request.status < 300) return resolve();
      reject(fieldError(name, refusalOf(request)));
    });
    request.addEventListener('error', () => {
      done();
      reject(fieldError(name, 'The upload did not reach the server; try again.'));
    });
    request.send(file);
  });
}

function refusalOf(request) {
  try {
    const message = JSON.parse(request.responseText)?.error?.message;
    if (typeof message === 'string' && message !== '') return message;
  } catch {
    // not Atelier's JSON: an object store's XML, or a proxy's page
  }
  if (request.status === 413) return 'The file is too large for this server.';
  return `The upload was refused (HTTP ${request.status}); try again.`;
}

// ---------------------------------------------------------------- the Generate form's inputs

/**
 * The video form's starting image, where the model animates one (its capabilities' `modes`
 * hold `image`): optional beside text-to-video, required where the model does only images.
 */
export function startImageField(caps) {
  const modes = caps.modes ?? ['text'];
  if (!modes.includes('image')) return null;
  const fromText = modes.includes('text');
  return imageField('imageMediaId', 'Starting image', {
    required: !fromText,
    hint: fromText
      ? 'Optional: the video starts from this picture (image to video).'
      : 'This model animates a picture: choose one.',
  });
}

/** Fields of the Generate form this module and elements.js own, whose refusals go next to them. */
const inputFields = ['imageMediaId', 'audioMediaId', 'elementIds'];

/**
 * The Generate form's chosen files, uploaded, as generate*Input fields (`imageMediaId`, an
 * avatar video's `audioMediaId`), or nothing. Clears what an earlier submit said next to them.
 */
export async function uploadInputs(form) {
  formErrors(form, h('p')).clear();
  const input = {};
  for (const name of ['imageMediaId', 'audioMediaId']) {
    const mediaId = await uploadChosen(form, name);
    if (mediaId !== null) input[name] = mediaId;
  }
  return input;
}

/** Shows a refusal of a starting image or of elements next to its field; false for others. */
export function showInputError(form, error) {
  const field = error?.extensions?.field;
  if (!inputFields.includes(field) || form.elements.namedItem(field) === null) return false;
  formErrors(form, h('p')).show(error);
  return true;
}

/** Shown images of media of the account, by media id: fresh download URLs, one request. */
export async function downloadUrls(mediaIds) {
  if (mediaIds.length === 0) return new Map();
  const { getDownloadUrls } = await api(
    'query ($ids: [ID!]!) { getDownloadUrls(mediaIds: $ids) { mediaId url } }',
    { ids: mediaIds },
  );
  return new Map(getDownloadUrls.map((d) => [d.mediaId, d.url]));
}
