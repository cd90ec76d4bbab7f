// The Generate form's fields for each kind and model, from the model's capabilities, and the
// generate*Input the filled form describes (generate.js lays the form out and submits it).

import { avatarField } from './avatars.js';
import { h } from './dom.js';
import { elementIdsOf, elementsField } from './elements.js';
import { audioField, startImageField } from './uploads.js';
import { allVoices } from './voices.js';

/** The form's fields for one kind and model, from the model's capabilities. */
export async function kindFields(kind, model) {
  const caps = model?.capabilities ?? {};
  const select = (name, label, options, required = true) =>
    h(
      'label',
      {},
      label,
      h(
        'select',
        { name, required },
        options.map(([value, text]) => h('option', { value }, text)),
      ),
    );
  const text = (name, label, max, required = true) =>
    h('label', {}, label, h('textarea', { name, rows: 3, required, maxlength: max }));
  const number = (name, label, attributes) =>
    h('label', {}, label, h('input', { name, type: 'number', ...attributes }));
  if (kind === 'image') {
    return [
      text('prompt', 'Prompt', caps.maxPromptLength),
      select(
        'size',
        'Size',
        (caps.sizes ?? []).map((s) => [
          `${s.width}x${s.height}`,
          `${s.width} × ${s.height} (${s.aspectRatio})`,
        ]),
      ),
      select(
        'format',
        'Format',
        (caps.formats ?? []).map((f) => [f, f.toUpperCase()]),
      ),
      await elementsField(caps),
    ];
  }
  if (kind === 'video') {
    return [
      text('prompt', 'Prompt', caps.maxPromptLength),
      select(
        'videoFormat',
        'Format',
        (caps.formats ?? []).map((f) => [
          `${f.resolution}|${f.aspectRatio}`,
          `${f.resolution} ${f.aspectRatio}`,
        ]),
      ),
      number('durationSeconds', 'Duration (seconds)', {
        min: 1,
        max: Math.max(
          ...(caps.formats ?? [{ maxDurationSeconds: 10 }]).map((f) => f.maxDurationSeconds ?? 10),
        ),
        value: caps.defaultDurationSeconds ?? 5,
      }),
      startImageField(caps),
      await elementsField(caps),
    ];
  }
  if (kind === 'speech') {
    return [
      text('text', 'Text', caps.maxTextLength),
      ...voicePicker(await allVoices()),
      select(
        'format',
        'Format',
        (caps.formats ?? []).map((f) => [f, f.toUpperCase()]),
      ),
      number('speed', 'Speed', {
        min: caps.speed?.min ?? 0.5,
        max: caps.speed?.max ?? 2,
        step: 0.1,
        value: 1,
      }),
    ];
  }
  return [
    await avatarField(),
    text('script', 'Script', caps.maxScriptLength, false),
    audioField('audioMediaId', 'Or a recording to speak', {
      required: false,
      hint: 'Instead of a script: the avatar speaks this audio file (MP3, WAV, Ogg, Opus, FLAC).',
    }),
    h(
      'label',
      {},
      'Voice of the script',
      h(
        'select',
        { name: 'voiceModelId' },
        h('option', { value: '' }, 'The avatar’s own voice'),
        (await allVoices()).map((v) =>
          h('option', { value: v.voiceModelId }, `${v.name} (${v.language})`),
        ),
      ),
    ),
    select(
      'resolution',
      'Resolution',
      (caps.resolutions ?? []).map((r) => [r.resolution, r.resolution]),
    ),
  ];
}

/**
 * The voice the browser's languages suggest: the first voice of the first language that has
 * one, exactly (`en-gb`) or by its main tag (`en`); else the first voice.
 */
function preferredVoice(list) {
  for (const tag of navigator.languages ?? [navigator.language]) {
    const wanted = tag.toLowerCase();
    const exact = list.find((v) => v.language === wanted);
    if (exact !== undefined) return exact;
    const main = wanted.split('-')[0];
    const near = list.find((v) => v.language === main || v.language.startsWith(`${main}-`));
    if (near !== undefined) return near;
  }
  return list[0];
}

/** A search box and the voices it narrows down to, the browser's language chosen first. */
function voicePicker(list) {
  const chosen = preferredVoice(list);
  const option = (v) =>
    h('option', { value: v.voiceModelId, selected: v === chosen }, `${v.name} (${v.language})`);
  const select = h('select', { name: 'voiceModelId', required: true }, list.map(option));
  const search = h('input', {
    type: 'search',
    id: 'voice-search',
    placeholder: 'a name or a language, e.g. German, pt-br',
    autocomplete: 'off',
  });
  search.addEventListener('input', () => {
    const words = search.value.trim().toLowerCase();
    const keep = select.value;
    const shown = list.filter((v) => `${v.name} ${v.language}`.toLowerCase().includes(words));
    select.replaceChildren(...shown.map(option));
    if (shown.some((v) => v.voiceModelId === keep)) select.value = keep;
    select.dispatchEvent(new Event('change', { bubbles: true }));
  });
  return [h('label', {}, `Find a voice (${list.length})`, search), h('label', {}, 'Voice', select)];
}

/** The name of the kind's text field when it is still empty (nothing to price yet), else null. */
export function mainText(kind, form) {
  const [name, label] = {
    image: ['prompt', 'prompt'],
    video: ['prompt', 'prompt'],
    speech: ['text', 'text'],
    avatar: ['script', 'script'],
  }[kind];
  const field = form.elements.namedItem(name);
  if (field === null) return null; // an avatar form without avatars has no script to write
  return String(field.value ?? '').trim() === '' ? label : null;
}

/** An avatar video to speak a chosen recording rather than a script: priced once uploaded. */
export function speaksRecording(kind, form) {
  const recording = form.elements.namedItem('audioMediaId');
  return kind === 'avatar' && recording?.files?.length > 0 && mainText(kind, form) !== null;
}

/** The generate*Input the form describes. Long texts travel as variables, never in the query. */
export function inputOf(kind, form) {
  const data = new FormData(form);
  const value = (name) => {
    const v = data.get(name);
    return v === null || v === '' ? undefined : String(v);
  };
  const input = { modelId: value('modelId') };
  if (kind === 'image') {
    const [width, height] = (value('size') ?? '').split('x').map(Number);
    Object.assign(input, {
      prompt: value('prompt') ?? '',
      width,
      height,
      format: value('format'),
      elementIds: elementIdsOf(form),
    });
  } else if (kind === 'video') {
    const [resolution, aspectRatio] = (value('videoFormat') ?? '').split('|');
    const duration = value('durationSeconds');
    Object.assign(input, {
      prompt: value('prompt') ?? '',
      resolution,
      aspectRatio,
      durationSeconds: duration === undefined ? undefined : Number(duration),
      elementIds: elementIdsOf(form),
    });
  } else if (kind === 'speech') {
    const speed = value('speed');
    Object.assign(input, {
      text: value('text') ?? '',
      voiceModelId: value('voiceModelId'),
      format: value('format'),
      speed: speed === undefined ? undefined : Number(speed),
    });
  } else {
    const script = value('script');
    Object.assign(input, {
      avatarId: value('avatarId'),
      script,
      // The voice speaks the script; a recording speaks for itself.
      voiceModelId: script === undefined ? undefined : value('voiceModelId'),
      resolution: value('resolution'),
    });
  }
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
}

/**
 * A refusal with its fields named as the form's controls name them: the size control holds
 * width and height, a video's format its resolution and aspect ratio; so each error goes next
 * to what the person can change.
 */
export function onFormControls(error, kind) {
  const controls = {
    width: 'size',
    height: 'size',
    ...(kind === 'video' ? { resolution: 'videoFormat', aspectRatio: 'videoFormat' } : {}),
  };
  const control = (field) => (Object.hasOwn(controls, field) ? controls[field] : field);
  const extensions = error?.extensions ?? {};
  return {
    message: error?.message,
    extensions: {
      ...extensions,
      field: control(extensions.field),
      problems: extensions.problems?.map((p) => ({ ...p, field: control(p.field) })),
    },
  };
}
