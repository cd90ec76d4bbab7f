import { escapeHtml } from './html.ts';

/** A plain page for errors that must be shown to the person and never redirected. */
export function errorPage(title: string, message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Atelier</title><link rel="stylesheet" href="/assets/atelier.css"></head>
<body><main class="card"><h1>${escapeHtml(title)}</h1><p data-testid="error">${escapeHtml(message)}</p></main></body></html>`;
}
