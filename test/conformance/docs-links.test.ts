import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// Every relative link of README.md and docs/ leads somewhere: the file exists, and an `#anchor`
// is a heading of the page it names (GitHub's slugs) or an explicit `<a id>`. No Markdown
// library is among the dependencies, so this reads the little it needs itself: ATX headings,
// inline links and images, reference definitions and HTML href/src, outside code.

const root = fileURLToPath(new URL('../../', import.meta.url));

/** README.md and every Markdown page under docs/, as paths relative to the repository. */
function documentationPages(): string[] {
  const docs = readdirSync(path.join(root, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.posix.join('docs', name.split(path.sep).join('/')));
  return ['README.md', ...docs.sort()];
}

/** The page with fenced code blocks blanked (line count kept), so nothing in them counts. */
function withoutCode(markdown: string): string[] {
  let fence: string | null = null;
  return markdown.split('\n').map((line) => {
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null) {
      if (open === undefined) return line;
      fence = open;
      return '';
    }
    if (open !== undefined && open[0] === fence[0] && open.length >= fence.length) fence = null;
    return '';
  });
}

/** A line without its code spans (`` `[a](b)` `` is not a link). */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)[^`]*?(?:`(?!`)[^`]*?)*?\1(?!`)/g, '');
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces as `-`. */
export function slugOf(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or image: its text
    .replace(/<[^>]+>/g, '') // HTML tags
    .replace(/`/g, '')
    .replace(/\*/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page offers: its headings' slugs (a repeated one as `-1`, `-2`…) and ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const line of withoutCode(markdown)) {
    const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const slug = slugOf(heading);
      let unique = slug;
      for (let n = 1; anchors.has(unique); n++) unique = `${slug}-${n}`;
      anchors.add(unique);
    }
    for (const match of line.matchAll(/<a\s[^>]*?\b(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  }
  return anchors;
}

/** A link target of a page and the line it is on. */
export interface Link {
  readonly target: string;
  readonly line: number;
}

/** The links of a page: inline links and images, reference definitions, HTML href and src. */
export function linksOf(markdown: string): Link[] {
  const lines = withoutCode(markdown).map(withoutCodeSpans);
  const text = lines.join('\n');
  const lineAt = (index: number) => text.slice(0, index).split('\n').length;
  const links: Link[] = [];
  const patterns = [
    /!?\[[^\]]*\]\(\s*<?([^\s)>]+)>?(?:\s+"[^"]*")?\s*\)/g,
    /^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/gm,
    /\b(?:href|src)="([^"]+)"/g,
  ];
  for (const pattern of patterns)
    for (const match of text.matchAll(pattern))
      links.push({ target: match[1]!, line: lineAt(match.index) });
  return links.sort((a, b) => a.line - b.line);
}

/**
 * What is wrong with the links of `pages` (path → Markdown, paths relative to the repository):
 * one line per broken link, `page:line: target — why`. `exists` says whether a path that is
 * not one of the pages exists.
 */
export function brokenLinks(
  pages: ReadonlyMap<string, string>,
  exists: (file: string) => boolean,
): string[] {
  const anchors = new Map<string, Set<string>>();
  const anchorsOfPage = (page: string) => {
    let found = anchors.get(page);
    if (found === undefined) {
      found = anchorsOf(pages.get(page) ?? '');
      anchors.set(page, found);
    }
    return found;
  };
  const problems: string[] = [];
  for (const [page, markdown] of pages) {
    for (const { target, line } of linksOf(markdown)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // not relative
      const hash = target.indexOf('#');
      const file = hash === -1 ? target : target.slice(0, hash);
      const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
      const resolved =
        file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
      const where = `${page}:${line}: ${target}`;
      if (resolved.startsWith('../')) {
        problems.push(`${where} — outside the repository`);
        continue;
      }
      if (!pages.has(resolved) && !exists(resolved.replace(/\/$/, ''))) {
        problems.push(`${where} — no file ${resolved}`);
        continue;
      }
      if (anchor === null || !resolved.endsWith('.md')) continue;
      if (!pages.has(resolved)) {
        problems.push(`${where} — ${resolved} is not a documentation page, its anchors unchecked`);
        continue;
      }
      if (!anchorsOfPage(resolved).has(anchor))
        problems.push(`${where} — ${resolved} has no heading or id "${anchor}"`);
    }
  }
  return problems;
}

describe('documentation links', () => {
  it('every relative link of README.md and docs/ reaches its file and anchor', () => {
    const pages = new Map(
      documentationPages().map((page) => [page, readFileSync(path.join(root, page), 'utf8')]),
    );
    assert.ok(pages.size > 1);
    const problems = brokenLinks(pages, (file) => existsSync(path.join(root, file)));
    assert.deepEqual(problems, [], `broken links:\n${problems.join('\n')}`);
  });

  it('reaches every page from the README in two clicks, through docs/index.md at most', () => {
    const linked = (page: string) =>
      new Set(
        linksOf(readFileSync(path.join(root, page), 'utf8'))
          .map(({ target }) => target.split('#')[0]!)
          .filter((file) => file.endsWith('.md'))
          .map((file) => path.posix.normalize(path.posix.join(path.posix.dirname(page), file))),
      );
    const first = linked('README.md');
    assert.ok(first.has('docs/index.md'), 'the README links docs/index.md');
    const second = new Set([...first].flatMap((page) => [...linked(page)]));
    const unreached = documentationPages().filter(
      (page) => page !== 'README.md' && !first.has(page) && !second.has(page),
    );
    assert.deepEqual(unreached, [], `not linked from the README or a page it links: ${unreached}`);
  });

  it('names GitHub’s anchors: punctuation dropped, code kept, repeats numbered', () => {
    assert.equal(
      slugOf('Live updates (GraphQL over WebSocket)'),
      'live-updates-graphql-over-websocket',
    );
    assert.equal(slugOf('Latest `npm run bench`'), 'latest-npm-run-bench');
    assert.equal(
      slugOf('Fleets: several backends behind one model'),
      'fleets-several-backends-behind-one-model',
    );
    assert.equal(slugOf('OpenAI-compatible API (/v1)'), 'openai-compatible-api-v1');
    assert.equal(slugOf('The `snake_case` [link](x.md)'), 'the-snake_case-link');
    const anchors = anchorsOf('# A\n## A\n```\n# B\n```\n## A\n<a id="kept"></a>\n');
    assert.deepEqual([...anchors], ['a', 'a-1', 'a-2', 'kept']);
  });

  it('finds a missing file, a missing anchor and an anchor of another page, outside code', () => {
    const pages = new Map([
      [
        'README.md',
        [
          '# Atelier',
          'See [the guide](docs/guide.md), [its start](docs/guide.md#start),',
          '[a typo](docs/guide.md#strat), [nothing](docs/gone.md) and [here](#atelier).',
          'Not a link: `[x](docs/nowhere.md)`.',
          '```md',
          '[in a fence](docs/nowhere.md)',
          '```',
          '[wrapped',
          'text](#nowhere) and [outside](https://example.com/#x).',
        ].join('\n'),
      ],
      ['docs/guide.md', '# Guide\n## Start\nBack to [the README](../README.md#atelier).\n'],
    ]);
    assert.deepEqual(
      brokenLinks(pages, () => false),
      [
        'README.md:3: docs/guide.md#strat — docs/guide.md has no heading or id "strat"',
        'README.md:3: docs/gone.md — no file docs/gone.md',
        'README.md:8: #nowhere — README.md has no heading or id "nowhere"',
      ],
    );
  });
});
