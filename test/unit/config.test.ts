import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { localCertificateAuthority } from '../helpers/metadata-documents.ts';

const cwd = '/srv/atelier';

describe('configuration', () => {
  it('has working single-node defaults (DESIGN.md)', () => {
    const config = loadConfig({ env: {}, cwd });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.publicUrl, 'http://localhost:8080');
    assert.equal(config.dataDir, '/srv/atelier/data');
    assert.equal(config.databaseUrl, undefined);
    assert.deepEqual(config.warnings, []);
  });

  it('reads TRUST_PROXY as nobody, everybody, a hop count or addresses, refusing anything else', () => {
    const trust = (value: string) => loadConfig({ env: { TRUST_PROXY: value }, cwd }).trustProxy;
    assert.equal(loadConfig({ env: {}, cwd }).trustProxy, false);
    assert.equal(trust('true'), true);
    assert.equal(trust('1'), 1);
    assert.deepEqual(trust('10.0.0.0/8, 192.0.2.1,::1'), ['10.0.0.0/8', '192.0.2.1', '::1']);
    for (const bad of ['yes', 'caddy', '10.0.0.0/33', '1.2.3.4/8/1'])
      assert.throws(() => trust(bad), /TRUST_PROXY: expected false, true, a hop count/);
  });

  it('reads MCP_ALLOWED_ORIGINS as exact origins, refusing paths, wildcards and other schemes', () => {
    const origins = (value: string) =>
      loadConfig({ env: { MCP_ALLOWED_ORIGINS: value }, cwd }).mcpAllowedOrigins;
    assert.deepEqual(loadConfig({ env: {}, cwd }).mcpAllowedOrigins, []);
    assert.deepEqual(origins('https://app.example.com, http://localhost:5173'), [
      'https://app.example.com',
      'http://localhost:5173',
    ]);
    for (const bad of [
      '*',
      'https://app.example.com/',
      'https://app.example.com/mcp',
      'app.example.com',
      'ftp://files.example.com',
      'https://App.example.com',
    ])
      assert.throws(
        () => origins(bad),
        /MCP_ALLOWED_ORIGINS: expected comma-separated origins/,
        bad,
      );
  });

  it('counts rate limits where the nodes can share them: Redis, then PostgreSQL, else memory', () => {
    const store = (env: Record<string, string>) => loadConfig({ env, cwd }).rateLimits.store;
    const postgres = 'postgres://db/atelier';
    assert.equal(store({}), 'memory');
    assert.equal(store({ DATABASE_URL: postgres }), 'database');
    assert.equal(store({ DATABASE_URL: postgres, REDIS_URL: 'redis://cache:6379' }), 'redis');
    assert.equal(store({ REDIS_URL: 'rediss://cache', RATE_LIMIT_STORE: 'memory' }), 'memory');
    const config = loadConfig({ env: { REDIS_URL: 'redis://:pw@cache:6380/2' }, cwd });
    assert.deepEqual(config.redis, { url: 'redis://:pw@cache:6380/2', keyPrefix: 'atelier:' });
    assert.equal(loadConfig({ env: {}, cwd }).redis, null);

    assert.match(
      captureConfigError({ RATE_LIMIT_STORE: 'redis' }).message,
      /REDIS_URL: required with RATE_LIMIT_STORE=redis/,
    );
    assert.match(
      captureConfigError({ REDIS_KEY_PREFIX: 'has space' }).message,
      /REDIS_KEY_PREFIX: expected up to 64/,
    );
    for (const bad of ['http://cache:6379', 'cache:6379', 'redis://'])
      assert.match(captureConfigError({ REDIS_URL: bad }).message, /REDIS_URL: expected a redis:/);
  });

  it('is frozen', () => {
    const config = loadConfig({ env: {}, cwd });
    assert.throws(() => {
      (config as { port: number }).port = 1;
    }, TypeError);
  });

  it('derives the default public URL from the port and trims a trailing slash', () => {
    assert.equal(loadConfig({ env: { PORT: '9000' }, cwd }).publicUrl, 'http://localhost:9000');
    assert.equal(
      loadConfig({ env: { PUBLIC_URL: 'https://a.example/' }, cwd }).publicUrl,
      'https://a.example',
    );
  });

  it('lists every problem at once', () => {
    const error = captureConfigError({
      PORT: 'eighty',
      PUBLIC_URL: 'ftp://x',
      DATABASE_URL: 'mysql://x',
      LOG_LEVEL: 'loud',
    });
    assert.equal(error.problems.length, 4);
    for (const name of ['PORT', 'PUBLIC_URL', 'DATABASE_URL', 'LOG_LEVEL']) {
      assert.ok(
        error.problems.some((p) => p.startsWith(`${name}:`)),
        `${name} in ${error.message}`,
      );
    }
  });

  it('names a problem inside MODELS by its place, quoting only the value found there', () => {
    const model = {
      modelId: 'mdl_a',
      name: 'A',
      kind: 'image',
      engine: 'procedural-image',
      pricing: { unit: 'image', credits: 1 },
      capabilities: { sizes: [], formats: ['png'], maxPromptLength: 'long' },
      description: 'x'.repeat(5_000),
    };
    const { problems } = captureConfigError({ MODELS: JSON.stringify([model]) });
    assert.deepEqual(problems, [
      'MODELS[0].capabilities.sizes: Too small: expected array to have >=1 items (got [])',
      'MODELS[0].capabilities.maxPromptLength: Invalid input: expected number, received string (got "long")',
    ]);
  });

  it('refuses ports outside 1..65535', () => {
    assert.match(captureConfigError({ PORT: '70000' }).message, /PORT/);
    assert.match(captureConfigError({ PORT: '0' }).message, /PORT/);
  });

  it('reads a JSON file named by CONFIG_FILE; the environment wins', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'atelier-config-'));
    const file = path.join(dir, 'atelier.json');
    writeFileSync(file, JSON.stringify({ PORT: 9100, HOST: '0.0.0.0', LOG_LEVEL: 'warn' }));
    const config = loadConfig({ env: { CONFIG_FILE: file, LOG_LEVEL: 'error' }, cwd });
    assert.equal(config.port, 9100);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.logLevel, 'error');
  });

  it('says which file is unreadable', () => {
    const error = captureConfigError({ CONFIG_FILE: '/nonexistent/atelier.json' });
    assert.match(error.message, /CONFIG_FILE: cannot read \/nonexistent\/atelier\.json/);
  });

  it('warns about unsafe development defaults on an exposed interface', () => {
    const config = loadConfig({ env: { HOST: '0.0.0.0' }, cwd });
    assert.equal(config.warnings.length, 3);
    assert.match(config.warnings.join('\n'), /plain http/);
    assert.match(config.warnings.join('\n'), /DATABASE_URL/);
    assert.match(config.warnings.join('\n'), /METRICS_TOKEN or METRICS_PORT/);
    const guarded = loadConfig({ env: { HOST: '0.0.0.0', METRICS_PORT: '9464' }, cwd });
    assert.doesNotMatch(guarded.warnings.join('\n'), /METRICS/);
  });

  it('OAUTH_CIMD_DEV_CA: read once at start and warned about; refused in production or where it cannot work', async () => {
    const ca = await localCertificateAuthority();
    try {
      assert.equal(loadConfig({ env: {}, cwd }).oauth.cimdDevCa, null);
      const config = loadConfig({ env: { OAUTH_CIMD_DEV_CA: ca.caFile }, cwd });
      assert.deepEqual(config.oauth.cimdDevCa, {
        path: ca.caFile,
        pem: readFileSync(ca.caFile, 'utf8'),
      });
      assert.match(config.warnings.join('\n'), /OAUTH_CIMD_DEV_CA is set: .* from this computer/);
      // Relative to the working directory, like every other path.
      const relative = { OAUTH_CIMD_DEV_CA: path.basename(ca.caFile) };
      const here = loadConfig({ env: relative, cwd: path.dirname(ca.caFile) });
      assert.equal(here.oauth.cimdDevCa?.path, ca.caFile);
      assert.equal(
        loadConfig({
          env: { ...relative, OAUTH_CIMD_HOSTS: 'localhost' },
          cwd: path.dirname(ca.caFile),
        }).oauth.cimdDevCa?.path,
        ca.caFile,
      );

      const notPem = path.join(path.dirname(ca.caFile), 'not-a-cert.pem');
      writeFileSync(notPem, 'hello');
      const serverCert = path.join(path.dirname(ca.caFile), 'server.pem');
      writeFileSync(serverCert, ca.server.cert);
      for (const [env, reason] of [
        [
          { OAUTH_CIMD_DEV_CA: ca.caFile, NODE_ENV: 'production' },
          /OAUTH_CIMD_DEV_CA: refused with NODE_ENV=production: it is a development switch/,
        ],
        [
          { OAUTH_CIMD_DEV_CA: '/nonexistent/rootCA.pem' },
          /OAUTH_CIMD_DEV_CA: cannot read \/nonexistent\/rootCA\.pem/,
        ],
        [
          { OAUTH_CIMD_DEV_CA: notPem },
          /OAUTH_CIMD_DEV_CA: .*not-a-cert\.pem is not a PEM certificate/,
        ],
        [
          { OAUTH_CIMD_DEV_CA: serverCert },
          /OAUTH_CIMD_DEV_CA: .*server\.pem is not a CA certificate/,
        ],
        [
          { OAUTH_CIMD_DEV_CA: ca.caFile, OAUTH_CIMD_HOSTS: '' },
          /has no effect: OAUTH_CIMD_HOSTS is empty/,
        ],
        [
          { OAUTH_CIMD_DEV_CA: ca.caFile, OAUTH_CIMD_HOSTS: 'agent.example' },
          /has no effect: OAUTH_CIMD_HOSTS lists neither localhost nor 127\.0\.0\.1/,
        ],
      ] as const) {
        const error = captureConfigError(env);
        assert.equal(error.problems.length, 1, error.message);
        assert.match(error.message, reason);
      }
    } finally {
      ca.close();
    }
  });

  it('/metrics: on the main port and open by default; a token, or a loopback port of its own', () => {
    assert.deepEqual(loadConfig({ env: {}, cwd }).metrics, {
      token: null,
      port: null,
      host: '127.0.0.1',
    });
    const config = loadConfig({
      env: { METRICS_TOKEN: 'sixteen-chars-ok', METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' },
      cwd,
    });
    assert.deepEqual(config.metrics, { token: 'sixteen-chars-ok', port: 9464, host: '0.0.0.0' });
    assert.match(
      captureConfigError({ METRICS_TOKEN: 'short' }).message,
      /METRICS_TOKEN: expected at least 16 printable characters/,
    );
    assert.match(
      captureConfigError({ METRICS_PORT: '8080' }).message,
      /METRICS_PORT: must differ from PORT/,
    );
    assert.match(captureConfigError({ METRICS_PORT: '70000' }).message, /METRICS_PORT: expected/);
  });
});

describe('NODE_ENV (issue 30 §3)', () => {
  it('is read in any letter case; an unknown value is production, with a warning', () => {
    for (const [value, production, warned] of [
      [undefined, false, false],
      ['', false, false],
      ['development', false, false],
      ['Development', false, false],
      ['test', false, false],
      ['production', true, false],
      ['Production', true, false],
      [' PRODUCTION ', true, false],
      ['prod', true, true],
      ['staging', true, true],
    ] as const) {
      const env = value === undefined ? {} : { NODE_ENV: value };
      const config = loadConfig({ env, cwd: process.cwd() });
      assert.equal(config.graphqlLimits.introspection, !production, String(value));
      assert.equal(
        config.warnings.some((w) => w.startsWith(`NODE_ENV=${value} is not production`)),
        warned,
        String(value),
      );
      const refused = () =>
        loadConfig({ env: { ...env, WEBHOOK_ALLOW_LOCALHOST: 'true' }, cwd: process.cwd() });
      if (production) assert.throws(refused, /WEBHOOK_ALLOW_LOCALHOST: refused/, String(value));
      else assert.equal(refused().webhooks.allowLocalhost, true, String(value));
    }
  });
});

function captureConfigError(env: Record<string, string>): ConfigError {
  try {
    loadConfig({ env, cwd });
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error;
  }
  assert.fail('expected a ConfigError');
}
