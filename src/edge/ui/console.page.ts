import type { FastifyInstance } from 'fastify';
import type { IdentityConfig } from '../../config/config.ts';
import type { DeploymentConfig } from '../../config/deployment.ts';
import type { GenerationKind, ModelDefinition } from '../../domain/model.ts';
import type { Page } from '../../shared/pagination.ts';
import type { Services } from '../services.ts';
import { escapeHtml, sendPage } from './html.ts';
import { storageOrigins } from './storage-origin.ts';

/**
 * `/`: the landing page for anyone — what this deployment offers (its public models, voices and
 * elements, read from the catalogue as an anonymous caller would) and how to connect — and, for
 * a person holding an ID token from `/login`, the web console (`assets/console.js`), which
 * works like any browser client of the API: the ID token in `X-IdP-Token` and in
 * `connection_init`, nothing kept by the server.
 */
export async function consolePage(
  app: FastifyInstance,
  o: {
    services: Services;
    identity: IdentityConfig;
    publicUrl: string;
    mediaStore: DeploymentConfig['mediaStore'];
  },
) {
  const storage = storageOrigins(o.mediaStore);
  app.get('/', async (_request, reply) => {
    const { catalogue, voices, library } = o.services;
    const models = (
      await everything((after) => catalogue.listModels(null, { status: 'ready' }, 100, after))
    ).map((v) => v.model);
    const voiceList = await everything((after) => voices.list(null, null, 100, after));
    const elements = await everything((after) => library.listElements(null, {}, 100, after));
    const html = landing({
      publicUrl: o.publicUrl,
      models,
      voices: voiceList.map((v) => `${v.name} (${v.language})`),
      elements: elements.map((e) => e.name),
    });
    // Media of the signed-in account plays from this origin, or from object storage over https;
    // the console uploads to this origin, or straight to the bucket when it takes presigned PUTs.
    return sendPage(reply, html, {
      connect: storage.connect,
      img: storage.media,
      media: ["'self'", 'https:', ...storage.media],
    });
  });
}

/** Every node of a paged list, page after page. */
async function everything<T>(
  page: (after: string | null) => Page<T> | Promise<Page<T>>,
): Promise<T[]> {
  const all: T[] = [];
  let after: string | null = null;
  for (;;) {
    const { nodes, pageInfo } = await page(after);
    all.push(...nodes);
    if (!pageInfo.hasNextPage || pageInfo.endCursor === null) return all;
    after = pageInfo.endCursor;
  }
}

const kindTitles: Readonly<Record<GenerationKind, string>> = {
  image: 'Image',
  video: 'Video',
  speech: 'Speech',
  avatar: 'Avatar video',
};

function price(model: ModelDefinition): string {
  const { credits, unit, per, category } = model.pricing;
  const amount = `${credits} credit${credits === 1 ? '' : 's'}`;
  const each = per === 1 ? `per ${unit}` : `per ${per} ${unit}s`;
  return `${amount} ${each}${category === null ? '' : ` (${category})`}`;
}

function landing(d: {
  publicUrl: string;
  models: readonly ModelDefinition[];
  voices: readonly string[];
  elements: readonly string[];
}): string {
  const e = escapeHtml;
  const ws = d.publicUrl.replace(/^http/, 'ws');
  const models = d.models
    .map(
      (m) => `<li><strong>${e(m.name)}</strong> <span class="tag">${e(kindTitles[m.kind])}</span>
        <span class="detail">${e(price(m))}</span>${m.description ? `<br><span class="detail">${e(m.description)}</span>` : ''}</li>`,
    )
    .join('\n');
  // Long lists (eSpeak alone brings about 200 voices) show their first few, the rest folded.
  const list = (items: readonly string[], none: string, shown = 12) => {
    if (items.length === 0) return `<p class="detail">${none}</p>`;
    const head = `<p>${items.slice(0, shown).map(e).join(' · ')}</p>`;
    if (items.length <= shown) return head;
    return `${head}<details><summary>All ${items.length}</summary><p>${items.map(e).join(' · ')}</p></details>`;
  };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Atelier</title>
<link rel="stylesheet" href="/assets/atelier.css">
<link rel="stylesheet" href="/assets/uplot.css">
<script src="/assets/graphql-ws.js" defer></script>
<script type="module" src="/assets/console.js"></script>
</head>
<body class="wide">
<header class="bar">
  <a class="brand" href="/">Atelier</a>
  <nav aria-label="Account">
    <span id="who" hidden></span>
    <a id="sign-in" href="/login?next=console">Sign in</a>
    <button id="sign-out" type="button" class="secondary" hidden>Sign out</button>
  </nav>
</header>
<main id="landing" data-testid="landing">
  <h1>Images, videos, speech and talking avatars, on your own server</h1>
  <p>This deployment generates media through one GraphQL API, live updates over WebSocket,
  and an MCP endpoint for AI agents. Sign in to see your credits, keys and generations.</p>
  <section aria-labelledby="models-title">
    <h2 id="models-title">Models</h2>
    <ul class="plain">${models}</ul>
  </section>
  <section aria-labelledby="voices-title">
    <h2 id="voices-title">Voices</h2>
    ${list(d.voices, 'No voices are configured.')}
  </section>
  <section aria-labelledby="elements-title">
    <h2 id="elements-title">Elements</h2>
    ${list(d.elements, 'No public elements.')}
  </section>
  <section aria-labelledby="connect-title">
    <h2 id="connect-title">Connect</h2>
    <dl>
      <dt>GraphQL API</dt><dd><code>POST ${e(d.publicUrl)}/graphql</code> with <code>Authorization: Bearer svc_…</code> (an API key) or <code>X-IdP-Token</code> (an ID token)</dd>
      <dt>Live updates</dt><dd><code>${e(ws)}/graphql</code>, subprotocol <code>graphql-transport-ws</code></dd>
      <dt>MCP for AI agents</dt><dd><code>${e(d.publicUrl)}/mcp</code> (OAuth 2.0: <code>${e(d.publicUrl)}/.well-known/oauth-protected-resource/mcp</code>)</dd>
    </dl>
  </section>
</main>
<main id="console" data-testid="console" hidden></main>
</body>
</html>`;
}
