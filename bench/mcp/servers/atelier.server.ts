// Atelier itself, as `serve` builds it (PGlite in DATA_DIR, or PostgreSQL with DATABASE_URL),
// with one account connected to the built-in client `atelier-local-tools`; prints {url, token,
// jwks} (the floor, started after it on the same database, checks the token with those keys).
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { keepWebAssemblyOnBaseline } from '../../../src/shared/wasm-tiering.ts';
import { benchAccount } from './bench-account.ts';

keepWebAssemblyOnBaseline(); // as `bin/atelier serve` runs
const config = loadConfig({
  env: { ...process.env, LOG_LEVEL: 'silent', RATE_LIMIT_PER_WINDOW: '0' },
  cwd: process.cwd(),
});
const app = await buildApp(config);
const { token } = await benchAccount(app, config);

const url = await app.http.listen({ host: '127.0.0.1', port: 0 });
console.log(JSON.stringify({ url, token, jwks: app.oauth.keys.jwks }));
process.on('SIGTERM', () => {
  app.close().catch(() => process.exit(1));
});
