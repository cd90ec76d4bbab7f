// `npm run docs:mcp-clients`: rewrites docs/mcp-clients.md from the instructions the server
// serves (test/conformance/mcp-clients-doc.test.ts fails until it is run).
import { readFileSync, writeFileSync } from 'node:fs';
import { renderMcpClientsDoc } from './mcp-clients-doc.ts';

const page = new URL('../docs/mcp-clients.md', import.meta.url);
const before = (() => {
  try {
    return readFileSync(page, 'utf8');
  } catch {
    return '';
  }
})();
const after = renderMcpClientsDoc();
if (after !== before) writeFileSync(page, after);
process.stdout.write(
  `docs/mcp-clients.md: ${after === before ? 'already up to date' : 'rewritten'}\n`,
);
