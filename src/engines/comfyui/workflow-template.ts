import type { GenerationKind } from '../../domain/model.ts';

/**
 * An operator's ComfyUI workflow (API format: node id → `{class_type, inputs}`) in which string
 * values mark where a request's values go. Text markers (`{{prompt}}`, `{{negative_prompt}}`)
 * may sit inside a longer string ("{{prompt}}, cinematic light"); value markers are the whole
 * string and are replaced by a number (`"{{seed}}"` → 42) or, for `{{image}}`, by the name of
 * the uploaded input image. Replacement is one pass, so a prompt that itself contains
 * `{{seed}}` stays text.
 */
export type Workflow = Readonly<Record<string, unknown>>;

const textMarkers = ['prompt', 'negative_prompt'] as const;

/** The markers each kind fills, and what fills them. */
const markersOf = {
  image: ['prompt', 'negative_prompt', 'seed', 'width', 'height', 'count', 'image'],
  video: ['prompt', 'seed', 'width', 'height', 'fps', 'frames', 'duration', 'image'],
} as const satisfies Partial<Record<GenerationKind, readonly string[]>>;

export type TemplateKind = keyof typeof markersOf;

/** The values of one request, by marker name (numbers, text, an uploaded image's name). */
export type MarkerValues = Readonly<Record<string, string | number>>;

const markerPattern = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** One marker as written in the template, with where it was found. */
export interface MarkerUse {
  readonly name: string;
  /** `node 6 inputs.text` */
  readonly at: string;
  /** True when the marker is the whole string value. */
  readonly whole: boolean;
}

/** Every marker in the workflow's string values, in node order. */
export function markerUses(workflow: Workflow): MarkerUse[] {
  const uses: MarkerUse[] = [];
  const walk = (value: unknown, at: string): void => {
    if (typeof value === 'string') {
      for (const match of value.matchAll(markerPattern)) {
        uses.push({ name: match[1]!, at, whole: match[0] === value.trim() });
      }
    } else if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) walk(item, `${at}[${i}]`);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) walk(item, `${at}.${key}`);
    }
  };
  for (const [id, node] of Object.entries(workflow)) walk(node, `node ${id}`);
  return uses;
}

/** What is wrong with the workflow's shape and markers for a kind; empty when it is usable. */
export function markerProblems(workflow: unknown, kind: TemplateKind): string[] {
  if (typeof workflow !== 'object' || workflow === null || Array.isArray(workflow)) {
    return ['engineOptions.workflow must be a ComfyUI workflow in API format (a JSON object)'];
  }
  const problems: string[] = [];
  const nodes = Object.entries(workflow as Record<string, unknown>);
  if (nodes.length === 0) problems.push('engineOptions.workflow has no nodes');
  for (const [id, node] of nodes) {
    const { class_type, inputs } = (node ?? {}) as { class_type?: unknown; inputs?: unknown };
    if (typeof class_type !== 'string' || typeof inputs !== 'object' || inputs === null) {
      problems.push(
        `workflow node ${id} needs "class_type" and "inputs" (export the workflow with "Save (API Format)")`,
      );
    }
  }
  const known: readonly string[] = markersOf[kind];
  for (const use of markerUses(workflow as Workflow)) {
    if (!known.includes(use.name)) {
      const hint = use.name === 'audio' ? ' (image and video requests carry no audio)' : '';
      problems.push(
        `workflow ${use.at}: unknown marker {{${use.name}}}${hint}; ${kind === 'image' ? 'an' : 'a'} ${kind} model fills ${known.map((m) => `{{${m}}}`).join(', ')}`,
      );
    } else if (!use.whole && !(textMarkers as readonly string[]).includes(use.name)) {
      problems.push(`workflow ${use.at}: {{${use.name}}} must be the whole value`);
    }
  }
  if (!hasMarker(workflow as Workflow, 'prompt')) {
    problems.push('workflow has no {{prompt}} marker: the prompt would go nowhere');
  }
  return problems;
}

/** Whether the workflow uses the marker anywhere. */
export function hasMarker(workflow: Workflow, name: string): boolean {
  return markerUses(workflow).some((use) => use.name === name);
}

/**
 * The size a workflow without `{{width}}`/`{{height}}` makes: the first node with numeric
 * `width` and `height` inputs (an `EmptyLatentImage`, say), if any.
 */
export function fixedSize(workflow: Workflow): { width: number; height: number } | undefined {
  for (const node of Object.values(workflow)) {
    const inputs = (node as { inputs?: Record<string, unknown> } | null)?.inputs;
    if (typeof inputs?.width === 'number' && typeof inputs.height === 'number') {
      return { width: inputs.width, height: inputs.height };
    }
  }
  return undefined;
}

/** The workflow with every marker replaced by its value; the template is left as it was. */
export function fillWorkflow(workflow: Workflow, values: MarkerValues): Workflow {
  const fill = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const whole = /^\s*\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*$/.exec(value)?.[1];
      if (whole !== undefined && values[whole] !== undefined) return values[whole];
      // A function replacer: `$&` and friends in a prompt are text, not patterns.
      return value.replace(markerPattern, (marker, name: string) => String(values[name] ?? marker));
    }
    if (Array.isArray(value)) return value.map(fill);
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fill(item)]));
    }
    return value;
  };
  return fill(workflow) as Workflow;
}
