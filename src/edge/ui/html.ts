import type { FastifyReply } from 'fastify';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Sends one of our pages: scripts and styles from this origin only, never framed, nothing
 * cached, no referrer. `connect` and `formAction` add origins the page may call or post to;
 * `media` lists where its audio and video may play from (none by default); `img` adds origins
 * of images besides this one, `data:` and any https origin.
 */
export function sendPage(
  reply: FastifyReply,
  html: string,
  extra: { connect?: string[]; formAction?: string[]; media?: string[]; img?: string[] } = {},
) {
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${["'self'", 'data:', 'https:', ...(extra.img ?? [])].join(' ')}`,
    `connect-src ${["'self'", ...(extra.connect ?? [])].join(' ')}`,
    `form-action ${["'self'", ...(extra.formAction ?? [])].join(' ')}`,
    ...(extra.media === undefined ? [] : [`media-src ${extra.media.join(' ')}`]),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  return reply
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', csp)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .send(html);
}

/** The document around a page's body: our stylesheet and the page's one module script. */
export function pageShell(title: string, script: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Atelier</title>
<link rel="stylesheet" href="/assets/atelier.css">
<script type="module" src="/assets/${escapeHtml(script)}"></script>
</head>
${body}
</html>`;
}
