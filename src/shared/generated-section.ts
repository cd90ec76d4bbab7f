// A part of a documentation page written from the code that declares it (the configuration
// table, the command-line table): everything between two marker lines is the rendering, so a
// script rewrites it and a test compares it.

export interface GeneratedSection {
  /** The page, relative to the repository: `docs/cli.md`. */
  readonly page: string;
  /** What it is, in words: `configuration table`. */
  readonly what: string;
  /** The marker lines around it. */
  readonly start: string;
  readonly end: string;
  /** What the reader runs to regenerate it, and from where: for the drift message. */
  readonly fix: string;
}

/** The section's text on `page`, or null when the markers are missing. */
export function readSection(section: GeneratedSection, page: string): string | null {
  const start = page.indexOf(`${section.start}\n`);
  const end = page.indexOf(`\n${section.end}`);
  if (start === -1 || end < start) return null;
  return page.slice(start + section.start.length + 1, end);
}

/** The page with the section replaced by `body`; throws when the markers are missing. */
export function writeSection(section: GeneratedSection, page: string, body: string): string {
  const current = readSection(section, page);
  if (current === null)
    throw new Error(`${section.page} lacks the lines ${section.start} and ${section.end}`);
  const start = page.indexOf(`${section.start}\n`) + section.start.length + 1;
  return `${page.slice(0, start)}${body}${page.slice(start + current.length)}`;
}

/**
 * Null when the page holds the rendering; otherwise what differs, line by line (`-` only on the
 * page, `+` only in the rendering), and how to fix it.
 */
export function describeDrift(
  section: GeneratedSection,
  page: string,
  rendered: string,
): string | null {
  const current = readSection(section, page);
  if (current === rendered) return null;
  if (current === null)
    return `${section.page} has no ${section.what} between ${section.start} and ${section.end}. ${section.fix}`;
  const onPage = new Set(current.split('\n'));
  const inRendering = new Set(rendered.split('\n'));
  const lines = [
    ...[...onPage].filter((line) => !inRendering.has(line)).map((line) => `- ${line}`),
    ...[...inRendering].filter((line) => !onPage.has(line)).map((line) => `+ ${line}`),
  ];
  if (lines.length === 0) lines.push('(the same rows, in another order)');
  return `${section.page}'s ${section.what} differs from the declaration:\n${lines.join('\n')}\n${section.fix}`;
}

/** A table cell: a pipe would end the cell early. */
export function tableCell(text: string): string {
  return text.replaceAll('|', '\\|');
}
