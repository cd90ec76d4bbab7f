import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import type { Code, Nodes, Root } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { toString as textOf } from 'mdast-util-to-string';

// The documentation read as GitHub reads it: CommonMark through micromark (setext headings,
// indented code, HTML blocks and nested lists as the specification has them), and GitHub's own
// heading anchors (github-slugger). Used by the link test and the documentation examples' tests.

/** The repository's root directory. */
export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

/** README.md and every Markdown page under docs/, as paths relative to the repository. */
export function documentationPages(): string[] {
  const docs = readdirSync(path.join(repositoryRoot, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.posix.join('docs', name.split(path.sep).join('/')));
  return ['README.md', ...docs.sort()];
}

/** A page's text, by its path relative to the repository. */
export function readPage(page: string): string {
  return readFileSync(path.join(repositoryRoot, page), 'utf8');
}

/** Every node of a tree, parents before their children, in document order. */
function* walk(node: Nodes): Generator<Nodes> {
  yield node;
  if ('children' in node) for (const child of node.children) yield* walk(child);
}

const lineOf = (node: Nodes) => node.position?.start.line ?? 0;

/** A page's syntax tree (mdast). */
export function parseMarkdown(markdown: string): Root {
  return fromMarkdown(markdown);
}

/**
 * Every anchor a page offers, as GitHub makes them: each heading's slug (lower case,
 * punctuation dropped, spaces as `-`, a repeat numbered `-1`, `-2`…) and each HTML `id` or
 * `name`. Text in code blocks is not a heading.
 */
export function anchorsOf(markdown: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  for (const node of walk(parseMarkdown(markdown))) {
    if (node.type === 'heading') anchors.add(slugger.slug(textOf(node, { includeHtml: false })));
    if (node.type === 'html') {
      for (const match of node.value.matchAll(/<a\s[^>]*?\b(?:id|name)="([^"]+)"/g)) {
        anchors.add(match[1]!);
      }
    }
  }
  return anchors;
}

/** GitHub's anchor of one heading's Markdown, e.g. `Latest \`npm run bench\`` → `latest-npm-run-bench`. */
export function slugOf(heading: string): string {
  return [...anchorsOf(`# ${heading}\n`)][0] ?? '';
}

/** A link target of a page and the line it is on. */
export interface Link {
  readonly target: string;
  readonly line: number;
}

/** The links of a page: links and images, reference definitions, HTML href and src. */
export function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  for (const node of walk(parseMarkdown(markdown))) {
    if (node.type === 'link' || node.type === 'image' || node.type === 'definition') {
      links.push({ target: node.url, line: lineOf(node) });
    }
    if (node.type === 'html') {
      for (const match of node.value.matchAll(/\b(?:href|src)="([^"]+)"/g)) {
        const before = node.value.slice(0, match.index).split('\n').length - 1;
        links.push({ target: match[1]!, line: lineOf(node) + before });
      }
    }
  }
  return links.sort((a, b) => a.line - b.line);
}

/** A fenced or indented code block of a page. */
export interface CodeBlock {
  /** The page, relative to the repository. */
  readonly page: string;
  /** The line of its opening fence. */
  readonly line: number;
  /** Its language (the fence's first word), or null. */
  readonly lang: string | null;
  /** Its text, without the fences. */
  readonly code: string;
  /** What `<!-- example: … -->` right before it says, or null. */
  readonly marker: string | null;
}

/** `page:line` of a block, for messages. */
export const whereIs = (block: CodeBlock) => `${block.page}:${block.line}`;

/** The code blocks of a page, in order, each with the example marker right before it. */
export function codeBlocksOf(page: string, markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  for (const parent of walk(parseMarkdown(markdown))) {
    if (!('children' in parent)) continue;
    parent.children.forEach((node: Nodes, i: number) => {
      if (node.type !== 'code') return;
      const previous = i > 0 ? parent.children[i - 1] : undefined;
      blocks.push({
        page,
        line: lineOf(node),
        lang: (node as Code).lang ?? null,
        code: node.value,
        marker: previous?.type === 'html' ? markerOf(previous.value) : null,
      });
    });
  }
  return blocks.sort((a, b) => a.line - b.line);
}

function markerOf(html: string): string | null {
  return /^<!--\s*example:\s*([\s\S]*?)\s*-->\s*$/.exec(html.trim())?.[1] ?? null;
}
