import type { InputSpec, NodeClass } from './comfyui-nodes.ts';

/**
 * The ComfyUI stand-in's synchronous `POST /prompt` validation, as
 * `../shared/protocols/comfyui.md` ("POST /prompt") describes ComfyUI's `execution.py`
 * (`validate_prompt`, `validate_inputs`): `invalid_prompt` for a node without `class_type` or
 * with an uninstalled class, `prompt_no_outputs`, per-input errors collected per output node
 * with `dependent_outputs`, and success with the failed outputs dropped when one output is valid.
 */

/** An API-format graph: node id → node. */
export type Workflow = Record<string, { class_type?: unknown; inputs?: Record<string, unknown> }>;

export interface NodeError {
  type: string;
  message: string;
  details: string;
  extra_info: Record<string, unknown>;
}

export type Validation =
  | { ok: true; outputs: string[]; node_errors: Record<string, unknown> }
  | { ok: false; error: NodeError; node_errors: Record<string, unknown> };

/** A link is a 2-list `[source node id, output slot]`; anything else is a literal. */
export function asLink(value: unknown): [string, number] | undefined {
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [source, slot] = value as [unknown, unknown];
  return typeof source === 'string' && typeof slot === 'number' ? [source, slot] : undefined;
}

function inputError(
  type: string,
  message: string,
  name: string,
  details: string,
  received?: unknown,
): NodeError {
  const extra_info: Record<string, unknown> = { input_name: name };
  if (received !== undefined)
    Object.assign(extra_info, { input_config: null, received_value: received });
  return { type, message, details, extra_info };
}

function checkLiteral(name: string, spec: InputSpec, value: unknown): NodeError | undefined {
  if (spec.kind === 'INT' || spec.kind === 'FLOAT') {
    const number = typeof value === 'string' ? Number(value) : value;
    if (
      typeof number !== 'number' ||
      Number.isNaN(number) ||
      (spec.kind === 'INT' && !Number.isInteger(number))
    ) {
      return inputError(
        'invalid_input_type',
        `Failed to convert an input value to a ${spec.kind} value`,
        name,
        `${name}, ${String(value)}`,
        value,
      );
    }
    if (number < spec.min)
      return inputError(
        'value_smaller_than_min',
        `Value ${number} smaller than min of ${spec.min}`,
        name,
        name,
        value,
      );
    if (number > spec.max)
      return inputError(
        'value_bigger_than_max',
        `Value ${number} bigger than max of ${spec.max}`,
        name,
        name,
        value,
      );
  }
  if (spec.kind === 'STRING' && typeof value !== 'string') {
    return inputError(
      'invalid_input_type',
      'Failed to convert an input value to a STRING value',
      name,
      `${name}, ${String(value)}`,
      value,
    );
  }
  if (spec.kind === 'choice' && !spec.choices().includes(String(value))) {
    if (spec.custom !== undefined) {
      return inputError(
        'custom_validation_failed',
        'Custom validation failed for node',
        name,
        `${name} - ${spec.custom}: ${String(value)}`,
      );
    }
    const list = JSON.stringify(spec.choices());
    return inputError(
      'value_not_in_list',
      'Value not in list',
      name,
      `${name}: '${String(value)}' not in ${list}`,
      value,
    );
  }
  return undefined;
}

/** Validates a graph the way ComfyUI does before queueing it. */
export function validateWorkflow(
  workflow: Workflow,
  catalogue: Readonly<Record<string, NodeClass>>,
): Validation {
  const outputs: string[] = [];
  for (const [id, node] of Object.entries(workflow)) {
    if (typeof node?.class_type !== 'string') {
      const message = 'Cannot execute because a node is missing the class_type property.';
      return {
        ok: false,
        error: { type: 'invalid_prompt', message, details: `Node ID '#${id}'`, extra_info: {} },
        node_errors: {},
      };
    }
    const nodeClass = catalogue[node.class_type];
    if (nodeClass === undefined) {
      const message = `Cannot execute because node ${node.class_type} does not exist.`;
      return {
        ok: false,
        error: { type: 'invalid_prompt', message, details: `Node ID '#${id}'`, extra_info: {} },
        node_errors: {},
      };
    }
    if (nodeClass.outputNode) outputs.push(id);
  }
  if (outputs.length === 0) {
    const error = {
      type: 'prompt_no_outputs',
      message: 'Prompt has no outputs',
      details: '',
      extra_info: {},
    };
    return { ok: false, error, node_errors: {} };
  }

  const reasons = new Map<string, NodeError[]>();
  const valid = new Map<string, boolean>();
  const check = (id: string): boolean => {
    const known = valid.get(id);
    if (known !== undefined) return known;
    valid.set(id, true); // a cycle is not ComfyUI's concern at validation time
    const node = workflow[id]!;
    const nodeClass = catalogue[node.class_type as string]!;
    const errors: NodeError[] = [];
    let linkedOk = true;
    for (const [name, spec] of Object.entries(nodeClass.inputs)) {
      const value = node.inputs?.[name];
      if (value === undefined) {
        errors.push({
          type: 'required_input_missing',
          message: 'Required input is missing',
          details: name,
          extra_info: { input_name: name },
        });
        continue;
      }
      const linked = asLink(value);
      if (linked === undefined) {
        const error =
          spec.kind === 'link'
            ? inputError(
                'bad_linked_input',
                'Bad linked input, must be a length-2 list of [string, int]',
                name,
                `${name}, ${JSON.stringify(value)}`,
              )
            : checkLiteral(name, spec, value);
        if (error !== undefined) errors.push(error);
        continue;
      }
      const source = workflow[linked[0]];
      const sourceType =
        source === undefined
          ? undefined
          : catalogue[source.class_type as string]?.outputs[linked[1]];
      const wanted = spec.kind === 'link' ? spec.type : spec.kind;
      if (sourceType !== wanted) {
        errors.push(
          inputError(
            'return_type_mismatch',
            'Return type mismatch between linked nodes',
            name,
            `${name}, received_type(${sourceType}) mismatch input_type(${wanted})`,
          ),
        );
        continue;
      }
      if (!check(linked[0])) linkedOk = false;
    }
    if (errors.length > 0) reasons.set(id, errors);
    const ok = errors.length === 0 && linkedOk;
    valid.set(id, ok);
    return ok;
  };

  const good: string[] = [];
  const failed: string[] = [];
  for (const output of outputs) (check(output) ? good : failed).push(output);
  const node_errors: Record<
    string,
    { errors: NodeError[]; dependent_outputs: string[]; class_type: string }
  > = {};
  for (const [id, errors] of reasons) {
    const dependent_outputs = failed.filter((output) => upstream(workflow, output).includes(id));
    if (dependent_outputs.length === 0) continue;
    node_errors[id] = { errors, dependent_outputs, class_type: workflow[id]!.class_type as string };
  }
  if (good.length > 0) return { ok: true, outputs: good, node_errors };
  // As execution.py's validate_prompt: `details` lists only the output nodes' own errors. An
  // output refused because a node upstream failed (a checkpoint not on disk) has none, so
  // the cause is in node_errors alone and `details` is empty.
  const details = failed
    .flatMap((output) => (reasons.get(output) ?? []).map((e) => `${e.message}: ${e.details}`))
    .join('\n');
  const error = {
    type: 'prompt_outputs_failed_validation',
    message: 'Prompt outputs failed validation',
    details,
    extra_info: {},
  };
  return { ok: false, error, node_errors };
}

/** `id` and every node it depends on, dependencies first (the order ComfyUI runs them in). */
export function upstream(workflow: Workflow, id: string, seen = new Set<string>()): string[] {
  if (seen.has(id) || workflow[id] === undefined) return [];
  seen.add(id);
  const before = Object.values(workflow[id].inputs ?? {}).flatMap((value) => {
    const linked = asLink(value);
    return linked === undefined ? [] : upstream(workflow, linked[0], seen);
  });
  return [...before, id];
}
