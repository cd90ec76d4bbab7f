import { type FieldProblem, invalidInput } from './errors.ts';

/**
 * Why a piece of client text cannot be accepted, or null when it can. PostgreSQL refuses the
 * NUL character in `text` and `jsonb` (an internal error if it ever got that far), and an
 * unpaired UTF-16 surrogate has no UTF-8 encoding; neither has any use in a prompt, a name or a
 * key, so every edge refuses both as invalid input (120001) before anything else runs.
 */
export function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (!text.isWellFormed()) return 'must not contain an unpaired UTF-16 surrogate';
  return null;
}

/**
 * How deep client JSON may nest: far beyond any input of Atelier's (a generation's input is
 * three levels; a JSON-RPC tool call five), far below what any recursion in the libraries that
 * read it afterwards (graphql-js, zod, JSON.stringify) can take.
 */
export const maxJsonNesting = 64;

/** One value still to look at: its path, and how many objects and arrays enclose it. */
interface Pending {
  readonly value: unknown;
  readonly path: string;
  readonly depth: number;
  /** The path of the outermost field holding it: where a too-deep value is reported. */
  readonly top: string;
  /** Set for an object's key, which is checked as text, not descended into. */
  readonly key?: true;
}

/**
 * The first problem in `value` — a string itself, or any string or key nested in its objects
 * and arrays, that `textProblem` refuses, named by its path (`input.prompt`, `elementIds[2]`),
 * or nesting deeper than {@link maxJsonNesting}, named by its outermost field — in document
 * order; null when there is none. It walks with a list, not by recursion, so no depth of a
 * client's JSON can exhaust the call stack. Binary bodies (buffers) are not text.
 */
export function findTextProblem(value: unknown, path: string): FieldProblem | null {
  const pending: Pending[] = [{ value, path, depth: 0, top: path }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.key) {
      const message = textProblem(next.value as string);
      if (message !== null) return { field: next.path, message: `key ${message}` };
      continue;
    }
    const { value: v, depth } = next;
    if (typeof v === 'string') {
      const message = textProblem(v);
      if (message !== null) return { field: next.path, message };
      continue;
    }
    if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) continue;
    if (depth >= maxJsonNesting) {
      return { field: next.top, message: `nests deeper than ${maxJsonNesting} levels` };
    }
    const inner = (childPath: string): string =>
      depth === 0 && next.top === '' ? childPath : next.top;
    // Pushed last first, so they come off the list in document order.
    if (Array.isArray(v)) {
      for (let index = v.length - 1; index >= 0; index--) {
        const childPath = `${next.path}[${index}]`;
        pending.push({ value: v[index], path: childPath, depth: depth + 1, top: inner(childPath) });
      }
      continue;
    }
    const entries = Object.entries(v);
    for (let index = entries.length - 1; index >= 0; index--) {
      const [key, item] = entries[index]!;
      const field = next.path === '' ? printable(key) : `${next.path}.${printable(key)}`;
      const top = inner(field);
      pending.push({ value: item, path: field, depth: depth + 1, top });
      pending.push({ value: key, path: field, depth, top, key: true });
    }
  }
  return null;
}

/** Throws 120001 naming the field when `value` holds text no edge accepts. */
export function assertAcceptableText(value: unknown, path: string): void {
  const problem = findTextProblem(value, path);
  if (problem !== null) throw invalidInput([problem]);
}

/** A field name that is safe to send back even when the key itself is the problem. */
function printable(key: string): string {
  return key.toWellFormed().replaceAll('\u0000', '\uFFFD');
}
