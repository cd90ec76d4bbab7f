import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { fileTypeFromBuffer } from 'file-type';
import { type RunningServer, startServer } from '../helpers/cli.ts';
import { type DocExample, docExamples } from '../helpers/doc-examples.ts';
import { repositoryRoot } from '../helpers/markdown.ts';
import { testPicture } from '../helpers/media.ts';
import { freePort } from '../helpers/net.ts';

// Issue 33: the examples on the documentation pages run. One `bin/atelier serve` with an
// embedded database, started as `npm start` starts it; every shell block not marked "not run"
// runs in bash against it with the documented placeholders filled, and every examples/ script a
// page embeds runs as its page says. test/conformance/docs-examples.test.ts checks the rest.

const run = promisify(execFile);
const examples = docExamples();

/** The shape of a JSON value: its keys, recursively; an array by its first item. */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0])];
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, shapeOf((value as Record<string, unknown>)[key])]),
    );
  }
  return typeof value;
}

describe('the examples of README.md and docs/, run against a server', () => {
  let server: RunningServer;
  let dataDir: string;
  let work: string;
  let apiKey: string;
  let accountId: string;
  let port: string;
  const children: ChildProcess[] = [];

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-doc-data-'));
    server = await startServer(
      { DATA_DIR: dataDir, WEBHOOK_ALLOW_LOCALHOST: 'true' },
      { publicHost: 'localhost' },
    );
    port = new URL(server.url).port;
    // The first start's banner, as a person reads it: the admin's account and API key.
    apiKey = /^\s+(svc_\S+)$/m.exec(server.stderr())?.[1] ?? '';
    accountId = /\((acc_\w+)\)/.exec(server.stderr())?.[1] ?? '';
    assert.ok(apiKey && accountId, `no first-run banner:\n${server.stderr()}`);
    // A directory like a checkout to run the blocks in, with the files they name.
    work = mkdtempSync(path.join(tmpdir(), 'atelier-doc-work-'));
    for (const dir of ['bin', 'examples', 'node_modules']) {
      symlinkSync(path.join(repositoryRoot, dir), path.join(work, dir));
    }
    writeFileSync(path.join(work, 'me.png'), await testPicture(256, 256));
  });
  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    await server?.stop();
    for (const dir of [dataDir, work]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const environment = (extra: Record<string, string> = {}) => ({
    ...process.env,
    ATELIER_URL: `http://localhost:${port}`,
    ATELIER_API_KEY: apiKey,
    DATA_DIR: dataDir, // bin/atelier reaches the running server through its data directory
    ...extra,
  });

  async function graphql(query: string, variables: Record<string, unknown> = {}) {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ query, variables }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: an answer read field by field, as a test reads it
    const body = (await response.json()) as { data?: Record<string, any>; errors?: unknown[] };
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    return body.data!;
  }

  /** What a block names with a placeholder, filled as a reader fills it. */
  const filled = (code: string) =>
    code
      .replaceAll('localhost:8080', `localhost:${port}`)
      .replaceAll('svc_…', apiKey)
      .replaceAll('acc_…', accountId);

  /** Values a block takes from an earlier step on its page, made the same way. */
  async function earlierSteps(code: string): Promise<Record<string, string>> {
    if (!code.includes('$uploadUrl')) return {};
    const bytes = readFileSync(path.join(work, 'me.png')).length;
    const { createUpload } = await graphql(
      'mutation ($bytes: Int!) { createUpload(input: { kind: image, mimeType: "image/png", bytes: $bytes, filename: "me.png" }) { uploadUrl } }',
      { bytes },
    );
    return { uploadUrl: createUpload.uploadUrl };
  }

  /** Runs a shell block in bash: any failing command, unset variable or HTTP error fails it. */
  async function runShell({ block, where }: DocExample) {
    const script = [
      'set -euo pipefail',
      'curl() { command curl --fail-with-body "$@"; }',
      filled(block.code),
    ].join('\n');
    const env = environment(await earlierSteps(block.code));
    const result = await run('bash', ['-c', script], { cwd: work, env, timeout: 60_000 }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    const said = `${where}: exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
    assert.equal(result.code, 0, said);
    assert.doesNotMatch(result.stdout, /"errors"\s*:/, said);
    return result.stdout;
  }

  /** Starts an examples/ script, with a way to wait for what it prints. */
  function startExample(file: string, args: string[], extra: Record<string, string> = {}) {
    const child = spawn(process.execPath, [path.join(repositoryRoot, file), ...args], {
      cwd: work,
      env: environment(extra),
    });
    children.push(child);
    const printed = { stdout: '', stderr: '' };
    const waiting = new Set<() => void>();
    let ended: number | null | undefined;
    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream].on('data', (chunk) => {
        printed[stream] += String(chunk);
        for (const check of waiting) check();
      });
    }
    child.once('exit', (code) => {
      ended = code;
      for (const check of waiting) check();
    });
    /** Resolves with all it printed on `stream` once that matches `text`: a signal, not a sleep. */
    const printedOn = (stream: 'stdout' | 'stderr', text: RegExp) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          if (text.test(printed[stream])) resolve(printed[stream]);
          else if (ended === undefined) return;
          else
            reject(
              new Error(
                `${file} ended (${ended}) before ${text}:\n${printed.stdout}\n${printed.stderr}`,
              ),
            );
          waiting.delete(check);
        };
        waiting.add(check);
        check();
      });
    return { child, printedOn };
  }

  async function submitImage() {
    const { generateImage } = await graphql(
      'mutation { generateImage(input: { modelId: "mdl_atelier-sketch", prompt: "a quiet harbour" }) { taskId } }',
    );
    return generateImage.taskId as string;
  }

  /** How each examples/ script a page embeds is run, and what shows it worked. */
  const scripts: Record<string, () => Promise<void>> = {
    'examples/live-updates.mjs': async () => {
      const taskId = await submitImage();
      const live = startExample('examples/live-updates.mjs', [taskId]);
      // The current state comes first, so a task that finished before the script subscribed
      // is still reported; the stream then ends, and so does the script.
      await live.printedOn('stdout', /^finished 100%$/m);
      const code = live.child.exitCode ?? (await once(live.child, 'exit'))[0];
      assert.equal(code, 0);
    },
    'examples/openai.mjs': async () => {
      await startExample('examples/openai.mjs', []).printedOn('stdout', /^wrote /m);
      for (const [file, mime] of [
        ['lighthouse.png', 'image/png'],
        ['hello.ogg', 'audio/ogg; codecs=opus'],
        ['harbour.png', 'image/png'],
      ] as const) {
        const type = await fileTypeFromBuffer(readFileSync(path.join(work, file)));
        assert.equal(type?.mime, mime, file);
      }
    },
    'examples/webhook-receiver.mjs': async () => {
      const receiverPort = await freePort();
      const { createWebhookEndpoint } = await graphql(
        'mutation ($url: String!) { createWebhookEndpoint(input: { url: $url, events: [task_finished] }) { secret } }',
        { url: `http://127.0.0.1:${receiverPort}/` },
      );
      const secret = { ATELIER_WEBHOOK_SECRET: createWebhookEndpoint.secret };
      const receiver = startExample(
        'examples/webhook-receiver.mjs',
        [String(receiverPort)],
        secret,
      );
      await receiver.printedOn('stdout', /^listening on /m);
      const taskId = await submitImage();
      await receiver.printedOn(
        'stdout',
        new RegExp(`^task\\.finished ${taskId} \\(msg_\\w+\\)$`, 'm'),
      );
      const forged = await fetch(`http://127.0.0.1:${receiverPort}/`, {
        method: 'POST',
        headers: {
          'webhook-id': 'msg_forged',
          'webhook-timestamp': '1',
          'webhook-signature': 'v1,AAAA',
        },
        body: JSON.stringify({ type: 'task.finished', data: { taskId } }),
      });
      assert.equal(forged.status, 400, 'a forged delivery is refused');
      await receiver.printedOn('stderr', /refused a delivery/);
    },
  };

  for (const [i, example] of examples.entries()) {
    const { example: kind, where } = example;
    if (kind.kind === 'shell') {
      // The answer a page shows under a block has the shape of the real answer.
      const next = examples[i + 1];
      const answer = next?.example.kind === 'answer' ? next : undefined;
      it(`${where}: runs${answer ? `, answering like ${answer.where}` : ''}`, async () => {
        const stdout = await runShell(example);
        if (answer === undefined) return;
        assert.deepEqual(
          shapeOf(JSON.parse(stdout)),
          shapeOf(JSON.parse(answer.block.code)),
          `${answer.where}: the documented answer differs from the real one:\n${stdout}`,
        );
      });
    }
    if (kind.kind === 'printed by npm start') {
      it(`${where}: is what the server printed at its first start`, () => {
        const printed = server.stderr();
        let from = 0;
        for (const line of filled(example.block.code)
          .split('\n')
          .filter((l) => l.trim())) {
          // `…` stands for what differs on every start: an id, a key.
          const pattern = line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('…', '\\S+');
          const found = new RegExp(`^${pattern}$`, 'm').exec(printed.slice(from));
          assert.ok(found, `${where}: the server did not print "${line}" here:\n${printed}`);
          from += found.index + found[0].length;
        }
      });
    }
    if (kind.kind === 'example file') {
      it(`${where}: ${kind.file} runs`, async () => {
        const script = scripts[kind.file];
        assert.ok(script, `${where}: add how ${kind.file} is run to this test's scripts`);
        await script();
      });
    }
  }
});
