// Atelier itself, as `serve` builds it, with one seeded account and key; prints {url, apiKey}.
// DATABASE_URL selects PostgreSQL; otherwise an in-memory PGlite.
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { keepWebAssemblyOnBaseline } from '../../../src/shared/wasm-tiering.ts';
import { openDatabase } from '../../../src/store/database.ts';
import { migrateToLatest } from '../../../src/store/migrator.ts';

// Rate limits are off unless the caller sets them (bench/rate-limits measures them).

keepWebAssemblyOnBaseline(); // as `bin/atelier serve` runs
const config = loadConfig({
  // Two categories, as the floors' account holds (a category exists once it is named here).
  env: {
    RATE_LIMIT_PER_WINDOW: '0',
    CREDIT_CATEGORIES: 'standard,video',
    ...process.env,
    LOG_LEVEL: 'silent',
  },
  cwd: process.cwd(),
});
const database =
  config.databaseUrl === undefined
    ? await openDatabase({ backend: 'pglite', dataDir: null })
    : await openDatabase({ backend: 'postgres', url: config.databaseUrl });
await migrateToLatest(database.db);
const app = await buildApp(config, { database });
const account = await app.services.accounts.create({
  alias: 'bench',
  apiKeyAccess: true,
  credits: { standard: 1000, video: 10 },
});
const key = await app.services.apiKeys.issue(account.id, { name: 'bench' });
const url = await app.http.listen({ host: '127.0.0.1', port: 0 });
console.log(JSON.stringify({ url, apiKey: key.secret }));
process.on('SIGTERM', () => {
  app.close().then(
    () => database.close(),
    () => process.exit(1),
  );
});
