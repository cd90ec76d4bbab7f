import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  anchorsOf,
  documentationPages,
  linksOf,
  readPage,
  repositoryRoot,
  slugOf,
} from '../helpers/markdown.ts';

// Every relative link of README.md and docs/ leads somewhere: the file exists, and an `#anchor`
// is a heading of the page it names (GitHub's slugs) or an explicit `<a id>`. The pages are
// read by a CommonMark parser (test/helpers/markdown.ts), so code blocks, fenced or indented,
// and code spans hold no links, and setext headings are headings.

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
    const pages = new Map(documentationPages().map((page) => [page, readPage(page)]));
    assert.ok(pages.size > 1);
    const problems = brokenLinks(pages, (file) => existsSync(path.join(repositoryRoot, file)));
    assert.deepEqual(problems, [], `broken links:\n${problems.join('\n')}`);
  });

  it('reaches every page from the README in two clicks, through docs/index.md at most', () => {
    const linked = (page: string) =>
      new Set(
        linksOf(readPage(page))
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
    assert.equal(slugOf('Ünïcode — and <b>HTML</b> & 2 spaces'), 'ünïcode--and-html--2-spaces');
    assert.equal(
      slugOf('A *stressed* ~~word~~ and an_underscore'),
      'a-stressed-word-and-an_underscore',
    );
  });

  it('reads setext headings as headings, indented code and raw HTML text as no links', () => {
    const page = [
      'Overview',
      '========',
      '',
      'Details of it',
      '-------------',
      '',
      'An example:',
      '',
      '    [indented code](docs/nowhere.md)',
      '    # not a heading',
      '',
      '- a list item with [a link](docs/guide.md#details-of-it)',
      '',
      '  ```',
      '  [fenced in a list](docs/nowhere.md)',
      '  ```',
      '<p><a href="docs/guide.md">html</a></p>',
    ].join('\n');
    assert.deepEqual([...anchorsOf(page)], ['overview', 'details-of-it']);
    assert.deepEqual(linksOf(page), [
      { target: 'docs/guide.md#details-of-it', line: 12 },
      { target: 'docs/guide.md', line: 17 },
    ]);
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
