import type { FastifyInstance } from 'fastify';
import type { AuthorizationFlow } from '../../auth/oauth/authorization-flow.ts';
import type { BrowserSessions } from '../../auth/oauth/browser-sessions.ts';
import type { OauthConfig } from '../../config/config.ts';
import { currentSession } from '../oauth/oauth-http.ts';
import { pageShell, sendPage } from './html.ts';

/**
 * `/consent`: shows what the client asks for (from `/oauth/consent/context`) and posts the
 * person's decision as a plain form. Chromium applies `form-action` to the redirect that
 * follows the post, so the pending client's redirect origin is allowed there, and only it.
 */
export async function consentPage(
  app: FastifyInstance,
  o: {
    oauth: OauthConfig;
    sessions: BrowserSessions;
    flow: AuthorizationFlow;
  },
) {
  app.get('/consent', async (request, reply) => {
    const session = await currentSession(request, o.sessions, o.oauth);
    const redirect = session === null ? null : await o.flow.pendingRedirect(session);
    const formAction = redirect === null ? [] : [new URL(redirect).origin];
    return sendPage(reply, page, { formAction });
  });
}

const page = pageShell(
  'Allow access',
  'consent.js',
  `<body>
<main class="card">
  <h1>Atelier</h1>
  <section id="consent" data-testid="consent" hidden>
    <p><strong id="client-name"></strong> wants to use Atelier as you.</p>
    <p id="client-identity" class="detail"></p>
    <div id="notices"></div>
    <ul id="permissions"></ul>
    <p id="redirect" class="detail"></p>
    <form id="decision" method="post">
      <input type="hidden" name="client_id">
      <input type="hidden" name="state">
      <input type="hidden" id="csrf">
      <fieldset id="limit" hidden>
        <legend>Limit what it may spend (optional)</legend>
        <label for="spend-credits">At most this many credits</label>
        <input id="spend-credits" type="number" min="1" step="1" inputmode="numeric">
        <label for="spend-category">of</label>
        <select id="spend-category"></select>
        <label for="spend-period">per</label>
        <select id="spend-period"></select>
        <p class="detail">Left empty: no limit beyond your balance. You can change it later.</p>
      </fieldset>
      <button id="approve" type="submit" name="scope">Allow</button>
      <button id="deny" type="submit" class="secondary">Deny</button>
    </form>
  </section>
  <p id="message" role="alert" hidden></p>
</main>
</body>`,
);
