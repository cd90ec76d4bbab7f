import type { GenerationKind } from '../../domain/model.ts';

/**
 * The operator's `input` template for a Replicate model: a JSON object in the model's own
 * input schema whose string values may hold placeholders such as `"{{prompt}}"`. A value that
 * is exactly one placeholder takes the setting's type (`"{{seed}}"` becomes a number) and is
 * left out when the request has no such value (no negative prompt, no input image); a
 * placeholder inside a longer string is written into it (`"{{width}}x{{height}}"`).
 */

/** What a placeholder stands for in one request: a string, a number, or nothing. */
export type SlotValue = string | number | null;

interface KindSlots {
  /** Every placeholder a template of this kind may use. */
  readonly names: readonly string[];
  /** Groups of which a template must use at least one placeholder each. */
  readonly required: readonly (readonly string[])[];
}

/** The placeholders of each kind; files (`image`, `portrait`, `audio`) are sent as data: URIs. */
export const kindSlots: Readonly<Record<GenerationKind, KindSlots>> = {
  image: {
    names: [
      'prompt',
      'negative_prompt',
      'seed',
      'width',
      'height',
      'aspect_ratio',
      'count',
      'format',
      'image',
    ],
    required: [['prompt']],
  },
  video: {
    names: [
      'prompt',
      'seed',
      'width',
      'height',
      'aspect_ratio',
      'resolution',
      'duration',
      'fps',
      'image',
    ],
    required: [['prompt']],
  },
  speech: { names: ['text', 'voice', 'speed', 'pitch', 'format'], required: [['text']] },
  avatar: {
    names: ['portrait', 'audio', 'text', 'voice', 'width', 'height', 'resolution', 'fps'],
    required: [['portrait'], ['audio', 'text']],
  },
};

const placeholder = /\{\{\s*([a-z_]+)\s*\}\}/g;
const whole = /^\{\{\s*([a-z_]+)\s*\}\}$/;

/** Every placeholder name used anywhere in the template. */
export function placeholdersIn(template: unknown): Set<string> {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      for (const match of value.matchAll(placeholder)) found.add(match[1]!);
    } else if (Array.isArray(value)) {
      value.forEach(walk);
    } else if (typeof value === 'object' && value !== null) {
      Object.values(value).forEach(walk);
    }
  };
  walk(template);
  return found;
}

/** What is wrong with a template for a kind: unknown placeholders, missing required ones. */
export function templateProblems(kind: GenerationKind, template: unknown): string[] {
  const slots = kindSlots[kind];
  const used = placeholdersIn(template);
  const unknown = [...used].filter((name) => !slots.names.includes(name));
  const problems = unknown.map(
    (name) =>
      `input uses {{${name}}}, which ${kind} models do not have (${slots.names.map((n) => `{{${n}}}`).join(', ')})`,
  );
  for (const group of slots.required) {
    if (!group.some((name) => used.has(name))) {
      problems.push(`input must use ${group.map((n) => `{{${n}}}`).join(' or ')}`);
    }
  }
  return problems;
}

/** The template with every placeholder filled from `values` (names checked at start). */
export function fillTemplate(
  template: Readonly<Record<string, unknown>>,
  values: Readonly<Record<string, SlotValue>>,
): Record<string, unknown> {
  const fill = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const single = whole.exec(value);
      if (single !== null) return values[single[1]!] ?? undefined;
      return value.replace(placeholder, (_, name: string) => String(values[name] ?? ''));
    }
    if (Array.isArray(value)) return value.map(fill).filter((item) => item !== undefined);
    if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value).map(([key, item]) => [key, fill(item)] as const);
      return Object.fromEntries(entries.filter(([, item]) => item !== undefined));
    }
    return value;
  };
  return fill(template) as Record<string, unknown>;
}
