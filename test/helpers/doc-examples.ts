import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  type CodeBlock,
  codeBlocksOf,
  documentationPages,
  readPage,
  repositoryRoot,
  whereIs,
} from './markdown.ts';

// The code blocks of README.md and docs/, each of one kind that says how it is checked
// (docs/development.md, "Documentation examples"). The conformance test checks what needs no
// server (test/conformance/docs-examples.test.ts); the integration test runs the rest against
// one running `bin/atelier serve` (test/integration/docs-examples.test.ts).

/** Pages written by a script, and the test that holds their blocks to what the script writes. */
export const generatedPages: Readonly<Record<string, string>> = {
  'docs/mcp-clients.md':
    'rendered by npm run docs:mcp-clients from src/services/mcp-client-instructions.ts and held to it by test/conformance/mcp-clients-doc.test.ts',
};

/** How a block is checked. */
export type Example =
  /** Not run, for the reason the marker gives. */
  | { readonly kind: 'not run'; readonly reason: string }
  /** Output, a tree or a diagram: shown as it is, nothing to run. */
  | { readonly kind: 'text' }
  /** Each operation parsed and validated against the served schema. */
  | { readonly kind: 'graphql' }
  /** A model definition (or a list): read by the configuration loader, bound to its engines. */
  | { readonly kind: 'models' }
  /** The answer of the shell block above it: JSON of the same shape as the real answer. */
  | { readonly kind: 'answer' }
  /** What `npm start` prints: each line of the block is a line the server prints, in order. */
  | { readonly kind: 'printed by npm start' }
  /** A shell block run against a test server. */
  | { readonly kind: 'shell' }
  /** A script of examples/, embedded verbatim: the block equals the file, which is run. */
  | { readonly kind: 'example file'; readonly file: string }
  /** A block no rule covers: a test fails, saying so. */
  | { readonly kind: 'unclassified'; readonly problem: string };

const shells = new Set(['sh', 'bash', 'shell']);
const scripts = new Set(['js', 'mjs', 'ts', 'javascript', 'typescript']);

/** How `block` is checked, from its marker and language. */
export function exampleKind(block: CodeBlock): Example {
  const { marker, lang } = block;
  const generated = generatedPages[block.page];
  if (generated !== undefined) return { kind: 'not run', reason: generated };
  if (marker !== null) {
    const notRun = /^not run,\s*([\s\S]+)$/.exec(marker);
    if (notRun) return { kind: 'not run', reason: notRun[1]! };
    if (marker === 'answer of the block above') return { kind: 'answer' };
    if (marker === 'printed by npm start') return { kind: 'printed by npm start' };
    const file = /^(examples\/[\w.-]+)$/.exec(marker)?.[1];
    if (file !== undefined) return { kind: 'example file', file };
    return {
      kind: 'unclassified',
      problem: `unknown marker "example: ${marker}" (not run, <reason> | answer of the block above | printed by npm start | examples/<file>)`,
    };
  }
  if (lang === null) return { kind: 'unclassified', problem: 'no language: give it one, or text' };
  if (lang === 'text') return { kind: 'text' };
  if (lang === 'graphql') return { kind: 'graphql' };
  if (lang === 'json') return { kind: 'models' };
  if (shells.has(lang)) return { kind: 'shell' };
  if (scripts.has(lang)) {
    return {
      kind: 'unclassified',
      problem:
        'a script is embedded from examples/ (<!-- example: examples/<file> -->) or marked not run',
    };
  }
  return { kind: 'unclassified', problem: `no rule for the language "${lang}"` };
}

/** A block with its kind. */
export interface DocExample {
  readonly block: CodeBlock;
  readonly example: Example;
  /** `page:line`, for test names and messages. */
  readonly where: string;
}

/** Every code block of README.md and docs/, in page order, with its kind. */
export function docExamples(): DocExample[] {
  return documentationPages().flatMap((page) =>
    codeBlocksOf(page, readPage(page)).map((block) => ({
      block,
      example: exampleKind(block),
      where: whereIs(block),
    })),
  );
}

/** The text of an examples/ file as a page embeds it (without its last newline), or null. */
export function exampleFileText(file: string): string | null {
  const full = path.join(repositoryRoot, file);
  if (!existsSync(full)) return null;
  return readFileSync(full, 'utf8').replace(/\n$/, '');
}
