// The console's Generate section: a form per kind whose fields come from the chosen model's
// capabilities (kind-form.js), the price before submitting, and the task followed live to its
// result.

import { api } from './client.js';
import { contentCard, contentFields } from './content-card.js';
import { formErrors, h, say } from './dom.js';
import { inputOf, kindFields, mainText, onFormControls, speaksRecording } from './kind-form.js';
import { kinds } from './kinds.js';
import { follow, queuedText } from './live.js';
import { showInputError, uploadInputs } from './uploads.js';

export function renderGenerate(root, onFinished) {
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
    if (speaksRecording(kind, form)) {
      estimate.textContent = 'Priced by the recording’s length, once it is uploaded.';
      estimate.className = 'detail';
      return;
    }
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
    // A field the model does not take (elements, a starting image) comes back as null.
    const next = (await kindFields(kindSelect.value, model)).filter(Boolean);
    // Read now, not before the wait: what was typed meanwhile is kept too.
    const typed = valuesOf(fields);
    fields.replaceChildren(...next);
    restoreValues(fields, typed);
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
  const errors = formErrors(form, message);
  form.addEventListener('input', (event) => {
    // A changed form is a new request: the last one's refusal no longer describes it.
    errors.clear();
    if (event.target !== kindSelect && event.target !== modelSelect) soon();
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    errors.clear();
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
      Object.assign(input, await uploadInputs(form));
      const data = await api(
        `mutation ($input: ${inputType}!) { ${mutation}(input: $input) { contentId taskId } }`,
        { input },
      );
      const { contentId, taskId } = data[mutation];
      submitted = true;
      progress.hidden = false;
      progress.value = 0;
      // Charged and queued: the balance and the gallery (where it can be cancelled) say so.
      onFinished().catch((error) => say(message, error.message));
      let said = '';
      const task = await follow(
        taskId,
        (t) => {
          progress.value = t.progress ?? 0;
          said =
            t.status === 'finished'
              ? `Finished with code ${t.finishCode}${t.finishMessage ? `: ${t.finishMessage}` : ''}.`
              : t.status === 'queued'
                ? queuedText(t)
                : `Running… ${Math.round((t.progress ?? 0) * 100)} %`;
          status.textContent = said;
        },
        // While the live connection is down, say so; what happened meanwhile follows it.
        (up) => {
          status.textContent = up ? said : 'Reconnecting…';
        },
      );
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
      if (!showInputError(form, error)) errors.show(onFormControls(error, kind));
    } finally {
      submit.disabled = false;
      progress.hidden = true;
    }
  });
  return showKind();
}

/** The controls whose value carries over to the next model's fields: text, numbers, choices. */
const carried = 'textarea[name], select[name], input[name][type=text], input[name][type=number]';

/**
 * What the person typed or chose in `root`'s fields, by name: empty fields and choices left at
 * their default are left out, so the next model's own defaults stand.
 */
function valuesOf(root) {
  const values = new Map();
  for (const control of root.querySelectorAll(carried)) {
    if (control.value === '') continue;
    if (control.tagName === 'SELECT') {
      const untouched = [...control.options].find((o) => o.defaultSelected) ?? control.options[0];
      if (control.value === untouched?.value) continue;
    }
    values.set(control.name, control.value);
  }
  return values;
}

/**
 * Puts `values` back into the fields of the same name: a person who changes the model (or the
 * kind) keeps the prompt written for the last one. A choice the new field does not offer is
 * left at its default; files are chosen again.
 */
function restoreValues(root, values) {
  for (const control of root.querySelectorAll(carried)) {
    const value = values.get(control.name);
    if (value === undefined) continue;
    if (control.tagName === 'SELECT' && ![...control.options].some((o) => o.value === value)) {
      continue;
    }
    control.value = value;
  }
}
