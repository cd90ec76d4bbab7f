// The web console at `/`: shown to a person holding an ID token from /login (sessionStorage
// "atelier.idToken"), in place of the landing page. It is a browser client of the API like any
// other: the ID token in X-IdP-Token for GraphQL and in connection_init for graphql-ws
// (assets/graphql-ws.js sets globalThis.graphqlWs). An expired token, or one the server
// refuses, sends the person back to /login (client.js). DOM built with createElement only
// (dom.js). Admin accounts also get the operator's pages (admin.js); everyone gets a chart of
// their own usage (usage.js), the spending limits of their keys and agents (limits.js) and
// their webhooks (webhooks.js).

import { adminPages, isAdmin, renderAdminPage } from './admin.js';
import { ApiError, api, currentToken, forgetToken } from './client.js';
import { dateTime, h, say, section } from './dom.js';
import { limitFields, limitsEditor, limitText, reopenEditor } from './limits.js';
import { renderOwnUsage } from './usage.js';
import { renderWebhooks } from './webhooks.js';

let socket;
/** One graphql-ws connection for the page, opened on first use, signed in with the ID token. */
function liveClient() {
  socket ??= globalThis.graphqlWs.createClient({
    url: `${window.location.origin.replace(/^http/, 'ws')}/graphql`,
    connectionParams: () => ({ idpToken: currentToken() }),
  });
  return socket;
}

/** "Queued, 3 ahead, about 40 s": where a queued task stands, as far as the server can tell. */
function queuedText(task) {
  const parts = ['Queued'];
  if (task.queuePosition != null) parts.push(`${task.queuePosition} ahead`);
  if (task.estimatedStartAt != null) {
    const seconds = Math.round((Date.parse(task.estimatedStartAt) - Date.now()) / 1000);
    parts.push(
      seconds < 1
        ? 'starting now'
        : seconds < 60
          ? `about ${seconds} s`
          : `about ${Math.round(seconds / 60)} min`,
    );
  }
  return `${parts.join(', ')}…`;
}

/** Calls `onTask` with the task's current state, then each change, until it is finished. */
function follow(taskId, onTask) {
  return new Promise((resolve, reject) => {
    const unsubscribe = liveClient().subscribe(
      {
        query: `subscription ($taskId: ID!) { taskUpdated(taskId: $taskId) {
          taskId status progress finishCode finishMessage queuePosition estimatedStartAt } }`,
        variables: { taskId },
      },
      {
        next: ({ data, errors }) => {
          if (errors?.length) {
            reject(new ApiError(errors[0].message, errors[0].extensions?.code, {}));
            return;
          }
          onTask(data.taskUpdated);
          if (data.taskUpdated.status === 'finished') {
            unsubscribe();
            resolve(data.taskUpdated);
          }
        },
        error: (error) =>
          reject(error instanceof Error ? error : new Error('The live connection failed.')),
        complete: () => resolve(undefined),
      },
    );
  });
}

// ---------------------------------------------------------------- kinds

const kinds = [
  ['image', 'Image', 'generateImage', 'GenerateImageInput'],
  ['video', 'Video', 'generateVideo', 'GenerateVideoInput'],
  ['speech', 'Speech', 'generateSpeech', 'GenerateSpeechInput'],
  ['avatar', 'Avatar video', 'generateAvatarVideo', 'GenerateAvatarVideoInput'],
];
const kindLabel = Object.fromEntries(kinds.map(([kind, label]) => [kind, label]));

// ---------------------------------------------------------------- account and balances

async function renderAccount(root) {
  const { getUserByPrivateId: me } = await api(
    '{ getUserByPrivateId { id alias creditBalances { category amount } } }',
  );
  const who = document.getElementById('who');
  who.textContent = me.alias ?? me.id;
  who.hidden = false;
  const balances = me.creditBalances.length
    ? me.creditBalances.map((b) => h('li', {}, h('strong', {}, b.amount), ` ${b.category}`))
    : [h('li', {}, 'No credits yet.')];
  root.replaceChildren(...balances);
}

// ---------------------------------------------------------------- generating

/** The form's fields for one kind and model, from the model's capabilities. */
async function kindFields(kind, model) {
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
  const text = (name, label, max) =>
    h('label', {}, label, h('textarea', { name, rows: 3, required: true, maxlength: max }));
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
  const { listAvatars } = await api('{ listAvatars(first: 100) { nodes { avatarId name } } }');
  if (listAvatars.nodes.length === 0) {
    return [
      h(
        'p',
        { class: 'notice info' },
        'You have no avatar yet: create one from a portrait with the createAvatar mutation.',
      ),
    ];
  }
  return [
    select(
      'avatarId',
      'Avatar',
      listAvatars.nodes.map((a) => [a.avatarId, a.name]),
    ),
    text('script', 'Script', caps.maxScriptLength),
    select(
      'resolution',
      'Resolution',
      (caps.resolutions ?? []).map((r) => [r.resolution, r.resolution]),
    ),
  ];
}

/** Every voice, page after page (there are hundreds), fetched once per page load. */
let voices;
async function allVoices() {
  if (voices !== undefined) return voices;
  const found = [];
  let after = null;
  for (;;) {
    const { listVoiceModels: page } = await api(
      `query ($after: String) { listVoiceModels(first: 100, after: $after) {
        nodes { voiceModelId name language } pageInfo { hasNextPage endCursor } } }`,
      { after },
    );
    found.push(...page.nodes);
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  voices = found;
  return voices;
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
function mainText(kind, form) {
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

/** The generate*Input the form describes. Long texts travel as variables, never in the query. */
function inputOf(kind, form) {
  const data = new FormData(form);
  const value = (name) => {
    const v = data.get(name);
    return v === null || v === '' ? undefined : String(v);
  };
  const input = { modelId: value('modelId') };
  if (kind === 'image') {
    const [width, height] = (value('size') ?? '').split('x').map(Number);
    Object.assign(input, { prompt: value('prompt') ?? '', width, height, format: value('format') });
  } else if (kind === 'video') {
    const [resolution, aspectRatio] = (value('videoFormat') ?? '').split('|');
    const duration = value('durationSeconds');
    Object.assign(input, {
      prompt: value('prompt') ?? '',
      resolution,
      aspectRatio,
      durationSeconds: duration === undefined ? undefined : Number(duration),
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
    Object.assign(input, {
      avatarId: value('avatarId'),
      script: value('script') ?? '',
      resolution: value('resolution'),
    });
  }
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
}

function renderGenerate(root, onFinished) {
  const models = new Map();
  const kindSelect = h(
    'select',
    { name: 'kind', id: 'kind' },
    kinds.map(([kind, label]) => h('option', { value: kind }, label)),
  );
  const modelSelect = h('select', { name: 'modelId', id: 'model', required: true });
  const fields = h('div', { id: 'kind-fields' });
  const estimate = h('p', { id: 'estimate', 'aria-live': 'polite' });
  const message = h('p', { id: 'generate-message', hidden: true });
  const progress = h('progress', { id: 'progress', max: 1, value: 0, hidden: true });
  const status = h('p', { id: 'task-status', role: 'status' });
  const result = h('div', { id: 'result' });
  const submit = h('button', { type: 'submit' }, 'Generate');
  const form = h(
    'form',
    { id: 'generate-form', novalidate: true },
    h('label', {}, 'Kind', kindSelect),
    h('label', {}, 'Model', modelSelect),
    fields,
    estimate,
    submit,
    message,
  );
  root.replaceChildren(form, status, progress, result);

  let estimating = 0;
  const updateEstimate = async () => {
    const ticket = ++estimating;
    const kind = kindSelect.value;
    // Nothing to price yet: said as a hint, not as an error of a form nobody filled in.
    const empty = mainText(kind, form);
    if (empty !== null) {
      estimate.textContent = `Write the ${empty} to see the price.`;
      estimate.className = 'detail';
      return;
    }
    try {
      const { estimateCost } = await api(
        'query ($input: CostEstimateInput!) { estimateCost(input: $input) { credits category affordable } }',
        { input: { kind, input: inputOf(kind, form) } },
      );
      if (ticket !== estimating) return;
      const { credits, affordable } = estimateCost;
      estimate.textContent = `Costs ${credits} credit${credits === 1 ? '' : 's'}${
        affordable === false ? ' — more than you have' : ''
      }.`;
      estimate.className = affordable === false ? 'notice warning' : 'detail';
    } catch (error) {
      if (ticket !== estimating) return;
      estimate.textContent = error.message;
      estimate.className = 'notice warning';
    }
  };
  let timer;
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(updateEstimate, 250);
  };

  const showModelFields = async () => {
    const model = models.get(modelSelect.value);
    fields.replaceChildren(...(await kindFields(kindSelect.value, model)));
    soon();
  };
  const showKind = async () => {
    const { listModels } = await api(
      `query ($kind: GenerationKind) { listModels(kind: $kind, status: ready, first: 100) {
        nodes { modelId name accessible capabilities pricing { unit credits category } } } }`,
      { kind: kindSelect.value },
    );
    models.clear();
    const usable = listModels.nodes.filter((m) => m.accessible !== false);
    for (const m of usable) models.set(m.modelId, m);
    modelSelect.replaceChildren(...usable.map((m) => h('option', { value: m.modelId }, m.name)));
    await showModelFields();
  };
  kindSelect.addEventListener('change', () => showKind().catch((e) => say(message, e.message)));
  modelSelect.addEventListener('change', () =>
    showModelFields().catch((e) => say(message, e.message)),
  );
  form.addEventListener('input', (event) => {
    // A changed form is a new request: the last one's refusal no longer describes it.
    say(message, '');
    if (event.target !== kindSelect && event.target !== modelSelect) soon();
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(message, '');
    const kind = kindSelect.value;
    const [, , mutation, inputType] = kinds.find(([k]) => k === kind);
    // One key per press of the button: a retried request is never charged twice.
    const input = { ...inputOf(kind, form), idempotencyKey: crypto.randomUUID() };
    submit.disabled = true;
    result.replaceChildren();
    delete status.dataset.finishCode;
    status.textContent = 'Submitting…';
    let submitted = false;
    try {
      const data = await api(
        `mutation ($input: ${inputType}!) { ${mutation}(input: $input) { contentId taskId } }`,
        { input },
      );
      const { contentId, taskId } = data[mutation];
      submitted = true;
      progress.hidden = false;
      progress.value = 0;
      const task = await follow(taskId, (t) => {
        progress.value = t.progress ?? 0;
        status.textContent =
          t.status === 'finished'
            ? `Finished with code ${t.finishCode}${t.finishMessage ? `: ${t.finishMessage}` : ''}.`
            : t.status === 'queued'
              ? queuedText(t)
              : `Running… ${Math.round((t.progress ?? 0) * 100)} %`;
      });
      status.dataset.finishCode = String(task?.finishCode ?? '');
      const { getContent } = await api(
        `query ($id: ID!) { getContent(contentId: $id) { ${contentFields} } }`,
        { id: contentId },
      );
      result.replaceChildren(contentCard(getContent));
      await onFinished();
    } catch (error) {
      // Refused: nothing runs, so nothing is "Submitting…" any more.
      if (!submitted) status.textContent = 'Not submitted.';
      say(message, error.message);
    } finally {
      submit.disabled = false;
      progress.hidden = true;
    }
  });
  return showKind();
}

// ---------------------------------------------------------------- history

const contentFields = `contentId kind modelId createdAt creditsCharged creditsRefunded input
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

function contentCard(content) {
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

async function renderHistory(root) {
  const { listContents } = await api(`{ listContents(first: 12) { nodes { ${contentFields} } } }`);
  root.replaceChildren(
    ...(listContents.nodes.length
      ? listContents.nodes.map(contentCard)
      : [h('p', {}, 'Nothing generated yet.')]),
  );
}

// ---------------------------------------------------------------- API keys

async function renderKeys(root) {
  const list = h('ul', { id: 'key-list', class: 'plain' });
  const secret = h('div', { id: 'new-key', hidden: true });
  const message = h('p', { hidden: true });
  const name = h('input', { name: 'name', required: true, maxlength: 100 });
  const form = h(
    'form',
    { id: 'key-form', class: 'inline' },
    h('label', {}, 'New key name', name),
    h('button', { type: 'submit' }, 'Create key'),
  );
  root.replaceChildren(form, secret, message, list);
  /** Reads the keys again; `open`: the key whose limits editor stays open. */
  const refresh = async (open) => {
    const { listApiKeys, getUserByPrivateId: me } = await api(
      `{ listApiKeys { id name prefix createdAt lastUsedAt revokedAt expiresAt ${limitFields} }
        getUserByPrivateId { creditBalances { category } } }`,
    );
    const categories = me.creditBalances.map((b) => b.category);
    list.replaceChildren(
      ...listApiKeys.map((key) =>
        h(
          'li',
          { 'data-key-id': key.id },
          h('strong', {}, key.name),
          ` ${key.prefix}… · created ${dateTime(key.createdAt)} · last used ${dateTime(key.lastUsedAt)}${limitText(key.limits)} `,
          key.revokedAt
            ? h('span', { class: 'tag' }, `revoked ${dateTime(key.revokedAt)}`)
            : h(
                'button',
                {
                  type: 'button',
                  class: 'secondary',
                  'aria-label': `Revoke ${key.name}`,
                  onclick: async () => {
                    try {
                      await api(
                        'mutation ($id: ID!) { revokeApiKey(apiKeyId: $id) { id revokedAt } }',
                        { id: key.id },
                      );
                      await refresh();
                    } catch (error) {
                      say(message, error.message);
                    }
                  },
                },
                'Revoke',
              ),
          key.revokedAt
            ? null
            : limitsEditor({
                id: key.id,
                name: key.name,
                limits: key.limits,
                categories,
                save: async (limits) => {
                  await api(
                    `mutation ($id: ID!, $limits: SpendingLimitsInput) {
                      setApiKeyLimits(apiKeyId: $id, limits: $limits) { id } }`,
                    { id: key.id, limits },
                  );
                  await refresh(key.id);
                  say(
                    message,
                    limits === null
                      ? `${key.name} has no spending limits now.`
                      : `The limits of ${key.name} are saved.`,
                    'status',
                  );
                },
              }),
        ),
      ),
    );
    if (listApiKeys.length === 0) list.append(h('li', {}, 'No API keys.'));
    if (open !== undefined) reopenEditor(list, open);
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(message, '');
    try {
      const { createApiKey } = await api(
        'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { apiKey { id name } secret } }',
        { input: { name: name.value } },
      );
      secret.replaceChildren(
        h(
          'p',
          {},
          `The secret of ${createApiKey.apiKey.name}; copy it now, it is not shown again:`,
        ),
        h('output', { id: 'key-secret' }, createApiKey.secret),
      );
      secret.hidden = false;
      name.value = '';
      await refresh();
    } catch (error) {
      say(message, error.message);
    }
  });
  await refresh();
}

// ---------------------------------------------------------------- MCP connections

async function renderMcp(root) {
  const list = h('ul', { id: 'connection-list', class: 'plain' });
  const message = h('p', { hidden: true });
  const guides = h('div', { id: 'mcp-guides' });
  root.replaceChildren(list, message, h('h3', {}, 'Connect a client'), guides);
  /** Reads the connections again; `open`: the client whose limits editor stays open. */
  const refresh = async (open) => {
    const { listPersonalMcpConnections: connections, getUserByPrivateId: me } = await api(
      `{ listPersonalMcpConnections { clientId clientName connectedAt lastUsedAt revokedAt
        ${limitFields} } getUserByPrivateId { creditBalances { category } } }`,
    );
    const categories = me.creditBalances.map((b) => b.category);
    list.replaceChildren(
      ...connections.map((c) =>
        h(
          'li',
          { 'data-client-id': c.clientId },
          h('strong', {}, c.clientName ?? c.clientId),
          ` · connected ${dateTime(c.connectedAt)} · last used ${dateTime(c.lastUsedAt)}${limitText(c.limits)} `,
          c.revokedAt
            ? h('span', { class: 'tag' }, `revoked ${dateTime(c.revokedAt)}`)
            : h(
                'button',
                {
                  type: 'button',
                  class: 'secondary',
                  'aria-label': `Revoke ${c.clientName ?? c.clientId}`,
                  onclick: async () => {
                    try {
                      await api(
                        'mutation ($id: ID!) { revokeMcpConnection(clientId: $id) { clientId revokedAt } }',
                        { id: c.clientId },
                      );
                      say(
                        message,
                        `${c.clientName ?? c.clientId} can no longer act for you.`,
                        'status',
                      );
                      await refresh();
                    } catch (error) {
                      say(message, error.message);
                    }
                  },
                },
                'Revoke',
              ),
          c.revokedAt
            ? null
            : limitsEditor({
                id: c.clientId,
                name: c.clientName ?? c.clientId,
                limits: c.limits,
                categories,
                save: async (limits) => {
                  await api(
                    `mutation ($id: ID!, $limits: SpendingLimitsInput) {
                      setMcpConnectionLimits(clientId: $id, limits: $limits) { clientId } }`,
                    { id: c.clientId, limits },
                  );
                  await refresh(c.clientId);
                  say(
                    message,
                    limits === null
                      ? `${c.clientName ?? c.clientId} has no spending limits now.`
                      : `The limits of ${c.clientName ?? c.clientId} are saved.`,
                    'status',
                  );
                },
              }),
        ),
      ),
    );
    if (connections.length === 0) list.append(h('li', {}, 'No AI agent is connected.'));
    if (open !== undefined) reopenEditor(list, open);
  };
  const { listMcpClientInstructions } = await api(
    '{ listMcpClientInstructions { clientName serverUrl instructions configSnippet docsUrl } }',
  );
  guides.replaceChildren(
    ...listMcpClientInstructions.map((g) =>
      h(
        'details',
        {},
        h('summary', {}, g.clientName),
        h('p', { class: 'instructions' }, g.instructions),
        g.configSnippet ? h('pre', {}, h('code', {}, g.configSnippet)) : null,
        g.docsUrl ? h('a', { href: g.docsUrl, rel: 'noreferrer' }, 'Its documentation') : null,
      ),
    ),
  );
  await refresh();
}

// ---------------------------------------------------------------- the page

/**
 * The console's views: `#/` the person's own console, and, for admin accounts only, the
 * operator's pages at `#/admin/<page>[/<id>]` (admin.js), each linked from the navigation.
 */
async function showConsole() {
  const main = document.getElementById('console');
  const balances = h('ul', { id: 'balances', class: 'plain balances' });
  const generate = h('div', {});
  const history = h('div', { id: 'history', class: 'gallery' });
  const usage = h('div', { id: 'own-usage' });
  const keys = h('div', {});
  const mcp = h('div', {});
  const webhooks = h('div', {});
  const failure = h('p', { hidden: true });
  const home = h(
    'div',
    { id: 'home' },
    h('h1', {}, 'Your console'),
    failure,
    section('credits', 'Credits', balances),
    section('generate', 'Generate', generate),
    section('generations', 'Your generations', history),
    section('usage', 'Your usage', usage),
    section('keys', 'API keys', keys),
    section('mcp', 'AI agents (MCP)', mcp),
    section('webhooks', 'Webhooks', webhooks),
  );
  const adminView = h('div', { id: 'admin-page', hidden: true });
  const nav = h('nav', { id: 'console-nav', 'aria-label': 'Console pages', hidden: true });
  main.replaceChildren(nav, home, adminView);
  document.getElementById('landing').hidden = true;
  document.getElementById('sign-in').hidden = true;
  document.getElementById('sign-out').hidden = false;
  main.hidden = false;
  const afterGeneration = () =>
    Promise.all([renderAccount(balances), renderHistory(history), renderOwnUsage(usage)]);
  const [admin, ...loaded] = await Promise.allSettled([
    isAdmin(),
    renderAccount(balances),
    renderGenerate(generate, afterGeneration),
    renderHistory(history),
    renderOwnUsage(usage),
    renderKeys(keys),
    renderMcp(mcp),
    renderWebhooks(webhooks),
  ]);
  const failed = loaded.find((r) => r.status === 'rejected');
  if (failed !== undefined) say(failure, failed.reason.message);
  if (admin.status === 'fulfilled' && admin.value) {
    nav.replaceChildren(
      h(
        'ul',
        {},
        h('li', {}, h('a', { href: '#/' }, 'Your console')),
        adminPages.map(([route, title]) =>
          h('li', {}, h('a', { href: `#/admin/${route}` }, title)),
        ),
      ),
    );
    nav.hidden = false;
    const route = () => showRoute(nav, home, adminView).catch((e) => say(failure, e.message));
    window.addEventListener('hashchange', route);
    await route();
  }
  main.dataset.ready = 'true';
}

/** Shows the view the address names: an admin page (#/admin/<page>[/<id>]) or the console. */
async function showRoute(nav, home, adminView) {
  const [first, page, id] = window.location.hash.replace(/^#\/?/, '').split('/');
  const isAdminPage = first === 'admin' && adminPages.some(([route]) => route === page);
  for (const link of nav.querySelectorAll('a')) {
    const current = isAdminPage ? link.hash === `#/admin/${page}` : link.hash === '#/';
    if (current) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  home.hidden = isAdminPage;
  adminView.hidden = !isAdminPage;
  if (!isAdminPage) return;
  delete adminView.dataset.page;
  await renderAdminPage(adminView, page, id === undefined ? undefined : decodeURIComponent(id));
}

document.getElementById('sign-out').addEventListener('click', () => {
  forgetToken();
  socket?.dispose();
  window.location.assign('/');
});

if (currentToken() !== null) {
  showConsole().catch((error) => {
    const main = document.getElementById('console');
    main.hidden = false;
    main.replaceChildren(h('p', { role: 'alert' }, error.message));
  });
}
