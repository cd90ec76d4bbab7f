import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Database } from '../../src/store/database.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { submitOk, testModels, waitForTask } from '../helpers/generation.ts';
import {
  authorizeInBrowser,
  authorizeUrl,
  exchangeWithOauth4webapi,
  newPkce,
  TestBrowser,
} from '../helpers/oauth-flow.ts';
import { seedAccount } from '../helpers/seed.ts';

/**
 * The server scenarios of the official MCP conformance suite that apply to Atelier's `/mcp`
 * (a stateless, tools-only server). Why every other scenario is left out, and what each
 * one run here proves: mcp-conformance.md next to this file.
 */
const applicable: ReadonlyArray<{ scenario: string; todo?: string }> = [
  { scenario: 'server-initialize' },
  { scenario: 'ping' },
  { scenario: 'tools-list' },
  { scenario: 'resources-list' },
  { scenario: 'dns-rebinding-protection' },
];

const cli = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url),
);
const scenarioTimeoutMs = 30_000; // 30 seconds; a scenario takes well under one

interface Check {
  id: string;
  name: string;
  description: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
  details?: unknown;
}

/** The conformance CLI in a child process: its exit code and everything it printed. */
function runCli(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cli, ...args],
      { timeout: scenarioTimeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

/**
 * Runs `conformance server --scenario <name>`: the CLI writes its checks to
 * `<outputDir>/server-<name>-<timestamp>/checks.json` and exits 1 on any FAILURE.
 */
async function runScenario(url: string, scenario: string) {
  const outputDir = mkdtempSync(path.join(tmpdir(), 'atelier-mcp-conformance-'));
  try {
    const { code, output } = await runCli([
      'server',
      '--url',
      url,
      '--scenario',
      scenario,
      '--output-dir',
      outputDir,
    ]);
    const [resultDir] = readdirSync(outputDir);
    assert.ok(resultDir, `no checks.json written (exit ${code}):\n${output}`);
    const checks = JSON.parse(
      readFileSync(path.join(outputDir, resultDir, 'checks.json'), 'utf8'),
    ) as Check[];
    return { code, output, checks };
  } finally {
    rmSync(outputDir, { recursive: true, force: true });
  }
}

/** The scenario names in the table under `## <heading>` of mcp-conformance.md. */
function scenariosInManifest(heading: string): string[] {
  const markdown = readFileSync(new URL('./mcp-conformance.md', import.meta.url), 'utf8');
  const section = markdown.split(/^## /m).find((part) => part.startsWith(`${heading}\n`)) ?? '';
  return [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1]!);
}

function describeCheck(check: Check): string {
  const details = check.details === undefined ? '' : `\n      ${JSON.stringify(check.details)}`;
  return `  ✗ ${check.id} (${check.description}): ${check.errorMessage ?? 'no message'}${details}`;
}

/**
 * The suite cannot walk Atelier's OAuth flow, so it talks to this proxy, which streams
 * every request to the app's `/mcp` with the bearer token added. It stands in for the app's
 * public origin: its own Host and Origin are mapped to the app's, any other passes unchanged.
 */
async function startBearerProxy(appUrl: string, token: string): Promise<Server & { url: string }> {
  const app = new URL(appUrl);
  let self = '';
  const server = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    if (headers.host === self) headers.host = app.host;
    if (headers.origin === `http://${self}`) headers.origin = app.origin;
    const upstream = httpRequest(
      { host: app.hostname, port: app.port, method: req.method, path: '/mcp', headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.on('error', () => res.destroy());
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    // A client that hangs up early (e.g. cancelling an SSE stream) ends the upstream too.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(server, { url: `http://${self}/mcp` });
}

it('every server scenario of the installed suite is classified in mcp-conformance.md', async () => {
  const { code, output } = await runCli(['list', '--server']);
  assert.equal(code, 0, output);
  const listed = [...output.matchAll(/^ {2}- (\S+)/gm)].map((match) => match[1]!).sort();
  const runHere = applicable.map(({ scenario }) => scenario);
  assert.deepEqual(scenariosInManifest('Applicable: run by the test').sort(), [...runHere].sort());
  const classified = [...runHere, ...scenariosInManifest('Not applicable')].sort();
  assert.deepEqual(classified, listed);
});

describe('/mcp passes the official MCP conformance suite (server scenarios that apply)', () => {
  let database: Database;
  let t: TestApp;
  let proxy: Server & { url: string };

  before(async () => {
    database = await createTestDatabase('pglite');
    t = await startTestApp(database, { env: { MODELS: testModels } });
    const clientId = 'atelier-local-tools';
    const redirectUri = 'http://localhost:45999/oauth/callback';
    const password = 'a conformance password';
    const { account, apiKey } = await seedAccount(t.app, { credits: { standard: 20 } });
    // A generation, so resources-list has a resource to check (uri, name).
    const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'x' });
    await waitForTask(t.url, apiKey, taskId);
    const email = `conformance-${account.id}@example.test`;
    await t.app.services.identityProvider!.addUser({ accountId: account.id, email, password });
    const pkce = await newPkce();
    const callback = await authorizeInBrowser(
      new TestBrowser(t.url),
      t.url,
      authorizeUrl(t.url, { clientId, redirectUri, pkce }),
      { email, password },
    );
    const { access_token: token } = await exchangeWithOauth4webapi(
      t.url,
      clientId,
      redirectUri,
      callback,
      pkce,
    );
    proxy = await startBearerProxy(t.url, token);
  });
  after(async () => {
    if (proxy !== undefined) {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
    await t?.close();
    await database?.close();
  });

  for (const { scenario, todo } of applicable) {
    it(scenario, todo === undefined ? {} : { todo }, async (test) => {
      const { code, output, checks } = await runScenario(proxy.url, scenario);
      const failures = checks.filter((check) => check.status === 'FAILURE');
      for (const check of checks.filter((check) => check.status !== 'INFO'))
        test.diagnostic(`${check.status} ${check.id}: ${check.errorMessage ?? check.description}`);
      assert.deepEqual(
        failures.map((check) => check.id),
        [],
        `${scenario}: ${failures.length} failed check(s)\n${failures.map(describeCheck).join('\n')}`,
      );
      assert.ok(
        checks.some((check) => check.status === 'SUCCESS'),
        `${scenario}: no check succeeded, so nothing was proven:\n${output}`,
      );
      assert.equal(code, 0, `${scenario}: the CLI exited with ${code}:\n${output}`);
    });
  }
});
