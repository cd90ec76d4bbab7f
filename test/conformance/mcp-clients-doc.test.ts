import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { renderMcpClientsDoc } from '../../scripts/mcp-clients-doc.ts';

// docs/mcp-clients.md is the text listMcpClientInstructions serves, rendered by
// `npm run docs:mcp-clients`: the page and the code cannot say different things.

describe('docs/mcp-clients.md', () => {
  it('is the rendering of the instructions the server serves', () => {
    const page = readFileSync(new URL('../../docs/mcp-clients.md', import.meta.url), 'utf8');
    assert.ok(
      page === renderMcpClientsDoc(),
      'docs/mcp-clients.md differs from the instructions: run `npm run docs:mcp-clients`',
    );
  });

  it('shows both deployments: the local one in full, the public one where it differs', () => {
    const page = renderMcpClientsDoc();
    assert.match(page, /^## On this computer \(`PUBLIC_URL=http:\/\/localhost:8080`\)$/m);
    assert.match(page, /^## On a public server \(`PUBLIC_URL=https:\/\/atelier\.example\.com`\)$/m);
    const publicPart = page.slice(page.indexOf('## On a public server'));
    assert.deepEqual(
      [...publicPart.matchAll(/^### (.+)$/gm)].map((m) => m[1]),
      ['ChatGPT and other web-hosted agents'],
    );
    assert.match(publicPart, /- Works with this server: yes/);
  });
});
