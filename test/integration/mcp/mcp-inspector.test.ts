import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { inspectorVersion } from '../../../src/services/mcp-client-instructions.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { launchChromium, signInAndAllow, withoutBrowser } from '../../helpers/browser.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { graphql } from '../../helpers/graphql.ts';
import { type Lines, lines } from '../../helpers/lines.ts';
import { connectMcpClient, mcpAccessToken } from '../../helpers/mcp.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 18: the MCP Inspector (from npm) is a client Atelier's authors did not write. This runs
// exactly the command listMcpClientInstructions serves for it; npx finds the devDependency
// (npm_config_offline: never a download) and Chromium plays the person at the URL it prints.
// What the Inspector's CLI does without a terminal (2.12.0, clients/cli/build/index.js):
// - interactive OAuth needs a TTY on stdin or stderr, or MCP_AUTO_OPEN_ENABLED=true
//   (`assertInteractiveOAuthAllowed`); then it writes "Please navigate to: <url>" on stderr and
//   opens the URL with the `open` package, whose xdg-open runs $BROWSER here (no display);
// - it waits for the code on the fixed http://127.0.0.1:6276/oauth/callback;
// - it keeps OAuth state under ~/.mcp-inspector and tokens in the OS keychain, or with
//   MCP_INSPECTOR_SECRET_STORE=file in ~/.mcp-inspector/secrets.json;
// - it prints the result as JSON on stdout, and its tool-schema portability check on stderr:
//   one line counting the findings when there are any, each finding with --strict
//   (`writeSchemaLintReport`).

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
/** Where the Inspector's CLI listens for the authorization code; not configurable per run. */
const callbackPort = 6276;
const who = { email: 'inspector-user@example.test', password: 'an inspector password' };

/** The MCP Inspector entry's command as served, with this server's URL. */
async function servedInspectorCommand(url: string): Promise<string> {
  const response = await graphql<{
    listMcpClientInstructions: { clientName: string; configSnippet: string }[];
  }>(url, { query: '{ listMcpClientInstructions { clientName configSnippet } }' });
  const entry = response.body.data!.listMcpClientInstructions.find(
    (e) => e.clientName === 'MCP Inspector',
  )!;
  return entry.configSnippet;
}

/** Fails with the reason when the Inspector could not take its callback port. */
async function assertCallbackPortFree(): Promise<void> {
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(callbackPort, '127.0.0.1', resolve);
    });
  } catch (error) {
    assert.fail(
      `127.0.0.1:${callbackPort}, the Inspector CLI's OAuth callback, is taken (${(error as Error).message}): stop what holds it, then run this test again`,
    );
  }
  await new Promise((resolve) => probe.close(resolve));
}

/** One run of the Inspector's CLI: its stderr as it comes, and how it ended. */
interface InspectorRun {
  readonly stderr: Lines;
  readonly finished: Promise<{ code: number | null; stdout: string }>;
}

describe('the MCP Inspector CLI, as its instructions say to run it (issue 18)', {
  skip: withoutBrowser,
}, () => {
  let browser: Browser;
  let database: Database;
  let t: TestApp;
  let home: string;
  let serverTools: string[];
  before(async () => {
    browser = await launchChromium();
    database = await createTestDatabase('pglite');
    t = await startTestApp(database);
    const { account } = await seedAccount(t.app);
    await t.app.services.identityProvider!.addUser({ accountId: account.id, ...who });
    const client = await connectMcpClient(t, await mcpAccessToken(t, account.id));
    try {
      serverTools = (await client.listTools()).tools.map((tool) => tool.name).sort();
    } finally {
      await client.close();
    }
    home = mkdtempSync(path.join(tmpdir(), 'mcp-inspector-home-'));
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await database?.close();
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  });

  /** Runs the served command (plus `extra`) to its end; a run left running is stopped. */
  const withInspector = async (
    extra: string[],
    use: (run: InspectorRun) => Promise<void>,
  ): Promise<void> => {
    const [command, ...args] = (await servedInspectorCommand(t.url)).split(' ');
    assert.equal(command, 'npx');
    await assertCallbackPortFree();
    const child = spawn(command, [...args, ...extra], {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH,
        // Its catalog, OAuth state and secrets, away from the real home of whoever runs this.
        HOME: home,
        // A file in that home, never the OS keychain.
        MCP_INSPECTOR_SECRET_STORE: 'file',
        // No terminal here: without this the CLI refuses to start a sign-in.
        MCP_AUTO_OPEN_ENABLED: 'true',
        // xdg-open's browser: opens nothing; Chromium follows the printed URL instead.
        BROWSER: 'true',
        npm_config_offline: 'true',
        npm_config_update_notifier: 'false',
      },
      // Its own process group, so npx and the Inspector under it stop together.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stderr = lines(child.stderr);
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    const finished = new Promise<{ code: number | null; stdout: string }>((resolve) =>
      child.once('close', (code) => resolve({ code, stdout })),
    );
    try {
      await use({ stderr, finished });
    } finally {
      if (child.exitCode === null && child.signalCode === null)
        process.kill(-child.pid!, 'SIGTERM');
      await finished;
    }
  };

  /** How a run ended that should need no sign-in; fails at once if it asks for one. */
  const endedWithoutSignIn = async ({ stderr, finished }: InspectorRun) => {
    const ended = await Promise.race([stderr.first(/^Please navigate to: /), finished]);
    if (typeof ended === 'string') assert.fail(`asked to sign in again: ${ended}`);
    assert.equal(ended.code, 0, stderr.seen.join('\n'));
    return ended;
  };

  /** The tool names in what the CLI printed for `tools/list`. */
  const printedTools = (stdout: string) =>
    (JSON.parse(stdout) as { tools: { name: string }[] }).tools.map((tool) => tool.name).sort();

  it('pins the Inspector that package.json installs, with the built-in client ID', async () => {
    const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    assert.equal(manifest.devDependencies['@modelcontextprotocol/inspector'], inspectorVersion);
    assert.equal(
      await servedInspectorCommand(t.url),
      `npx @modelcontextprotocol/inspector@${inspectorVersion} --cli ${t.url}/mcp --transport http --client-id atelier-local-tools --method tools/list`,
    );
  });

  it('signs in through the browser, then prints every tool; the schema check finds nothing', async () => {
    await withInspector([], async ({ stderr, finished }) => {
      const asked = await Promise.race([stderr.first(/^Please navigate to: /), finished]);
      if (typeof asked !== 'string')
        assert.fail(`exited (${asked.code}) without asking to sign in:\n${stderr.seen.join('\n')}`);
      const authorizeUrl = asked.replace(/^Please navigate to: /, '');
      const params = new URL(authorizeUrl).searchParams;
      assert.equal(params.get('client_id'), 'atelier-local-tools');
      assert.equal(params.get('redirect_uri'), `http://127.0.0.1:${callbackPort}/oauth/callback`);
      assert.equal(params.get('resource'), `${t.url}/mcp`);
      assert.equal(
        await signInAndAllow(browser, authorizeUrl, who),
        'MCP Inspector and local tools',
      );

      const { code, stdout } = await finished;
      assert.equal(code, 0, stderr.seen.join('\n'));
      assert.ok(serverTools.includes('generate_image'), serverTools.join());
      assert.deepEqual(printedTools(stdout), serverTools);
      assert.equal(
        stderr.seen.find((line) => line.startsWith('Schema portability:')),
        undefined,
        stderr.seen.join('\n'),
      );
    });
  });

  it('a second run uses the stored token: no sign-in, the same tools', async () => {
    await withInspector([], async (run) => {
      const { stdout } = await endedWithoutSignIn(run);
      assert.deepEqual(printedTools(stdout), serverTools);
    });
  });

  it('with --strict, the Inspector reports no schema warning or error', async () => {
    await withInspector(['--strict'], async (run) => {
      // Exit code 6 would mean an error-severity finding; warnings are only written out.
      const { stdout } = await endedWithoutSignIn(run);
      assert.deepEqual(printedTools(stdout), serverTools);
      const findings = run.stderr.seen.filter((line) => /^(Error|Warning): tool "/.test(line));
      assert.deepEqual(findings, [], run.stderr.seen.join('\n'));
    });
  });
});
