// Atelier as `serve` builds it (PGlite in DATA_DIR, in-process workers), with the no-op image
// model, and one account that holds an API key (GraphQL, /v1) and an MCP access token;
// prints {url, apiKey, token}.
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { keepWebAssemblyOnBaseline } from '../../../src/shared/wasm-tiering.ts';
import { benchAccount } from '../../mcp/servers/bench-account.ts';
import { noopModels } from '../../noop-model.ts';

keepWebAssemblyOnBaseline(); // as `bin/atelier serve` runs
const config = loadConfig({
  env: { ...process.env, LOG_LEVEL: 'silent', RATE_LIMIT_PER_WINDOW: '0', MODELS: noopModels },
  cwd: process.cwd(),
});
const app = await buildApp(config);
const { token, apiKey } = await benchAccount(app, config, {
  credits: 1_000_000,
  apiKeyAccess: true,
});
const url = await app.http.listen({ host: '127.0.0.1', port: 0 });
console.log(JSON.stringify({ url, apiKey, token }));
process.on('SIGTERM', () => {
  app.close().catch(() => process.exit(1));
});
