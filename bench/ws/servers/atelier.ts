// Atelier on PGlite, WebSocket caps raised for the benchmark; prints {url, apiKey, pid}. The client
// submits a generation; its `queued` update is the one measured. No worker runs it: a worker
// would add the generation's `running` and `finished` updates to the same fan-out, three
// updates to the bare server's one, and the next update measured would queue behind them.
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { keepWebAssemblyOnBaseline } from '../../../src/shared/wasm-tiering.ts';
import { openDatabase } from '../../../src/store/database.ts';
import { migrateToLatest } from '../../../src/store/migrator.ts';
import { noopModels } from '../../noop-model.ts';

keepWebAssemblyOnBaseline(); // as `bin/atelier serve` runs
const config = loadConfig({
  env: {
    ...process.env,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_WINDOW: '0',
    DATA_DIR: '.tmp/bench-ws',
    MODELS: noopModels,
    WORKER_CONCURRENCY: '0',
  },
  cwd: process.cwd(),
});
const database = await openDatabase({ backend: 'pglite', dataDir: null });
await migrateToLatest(database.db);
const app = await buildApp(config, {
  database,
  webSocketLimits: { perConnection: 1_000, perAccount: 1_000_000 },
});
const account = await app.services.accounts.create({
  alias: 'bench',
  apiKeyAccess: true,
  credits: { standard: 1000 },
});
const key = await app.services.apiKeys.issue(account.id, { name: 'bench' });
const url = await app.http.listen({ host: '127.0.0.1', port: 0 });
console.log(JSON.stringify({ url, apiKey: key.secret, pid: process.pid }));
process.on('SIGTERM', () => {
  app.close().then(
    () => database.close(),
    () => process.exit(1),
  );
});
