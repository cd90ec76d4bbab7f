import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { fileTypeFromBuffer } from 'file-type';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import { atelier, type RunningServer, startServer } from '../../helpers/cli.ts';
import { balances, submitOk, waitForTask } from '../../helpers/generation.ts';

// docs/recipe-chaining.md, followed as a person follows it: a first Atelier (`npm start`), an
// account and key of it for the second (`bin/atelier account create`, `apikey create`, over
// the running server's control socket), a second Atelier on examples/second-atelier.json with
// that key, and examples/image.mjs and speech.mjs against the second. The page shows the file
// and the commands; the first test holds them equal to what runs here. Ports differ (the page
// says 8080 and 8081, the test takes free ones), so the file's `localhost:8080` is the one
// thing replaced, by the first server's address.

const root = new URL('../../../', import.meta.url).pathname;
const page = readFileSync(path.join(root, 'docs/recipe-chaining.md'), 'utf8');
const configFile = readFileSync(path.join(root, 'examples/second-atelier.json'), 'utf8');
const run = promisify(execFile);

/** The command lines of the page, as it prints them (`…` where a person pastes an ID). */
const commands = {
  account:
    'bin/atelier account create --alias second-atelier --api-key-access --credits standard=1000',
  key: 'bin/atelier apikey create --account acc_… --name second-atelier',
  second:
    'PORT=8081 DATA_DIR=./data-second CONFIG_FILE=examples/second-atelier.json FIRST_ATELIER_KEY=svc_… npm start',
  image: 'MODEL_ID=mdl_first-sketch node examples/image.mjs "a lighthouse at dawn"',
  speech: 'MODEL_ID=mdl_first-voice node examples/speech.mjs hello.txt voc_first-en-gb',
  show: 'bin/atelier account show --alias second-atelier',
} as const;

/** A command line's words, a double-quoted one as one word without its quotes. */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|\S+/g)].map((m) => m[1] ?? m[0]);
}

/** The fenced blocks of `markdown` in `language`, each without its fence lines. */
function blocks(markdown: string, language: string): string[] {
  const found: string[] = [];
  const fence = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm');
  for (const match of markdown.matchAll(fence)) found.push(match[1]!);
  return found;
}

describe('docs/recipe-chaining.md', () => {
  it('shows examples/second-atelier.json verbatim and the commands this test runs', () => {
    assert.deepEqual(blocks(page, 'json'), [configFile]);
    const shell = blocks(page, 'sh').join('');
    for (const line of Object.values(commands)) assert.ok(shell.includes(line), line);
    assert.match(configFile, /"baseUrl": "http:\/\/localhost:8080\/v1"/);
  });

  describe('followed end to end', () => {
    const dirs: string[] = [];
    const servers: RunningServer[] = [];
    let work = '';
    let firstDataDir = '';
    let config = '';
    let first: RunningServer;
    let key = '';

    const newDir = (prefix: string) => {
      const dir = mkdtempSync(path.join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    };

    before(async () => {
      work = newDir('atelier-recipe-');
      firstDataDir = path.join(work, 'data');
      first = await startServer({ DATA_DIR: firstDataDir });
      servers.push(first);
      config = path.join(work, 'second-atelier.json');
      writeFileSync(config, configFile.replaceAll('http://localhost:8080', first.url));
    });
    after(async () => {
      for (const server of servers) await server.stop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    /** `bin/atelier …` of the page against the first, running, server; its JSON output. */
    async function onFirst<T>(args: string[]): Promise<T> {
      const result = await atelier(args, { DATA_DIR: firstDataDir });
      assert.equal(result.code, 0, result.stderr);
      return JSON.parse(result.stdout) as T;
    }

    /** The API key a new data directory's first start printed once, on stderr. */
    function firstRunKey(server: RunningServer): string {
      const key = /First run:[\s\S]*?\n\s+(svc_\w+)/.exec(server.stderr())?.[1];
      assert.ok(key, server.stderr());
      return key;
    }

    it('the second Atelier draws and speaks through the first, each charging its price', async () => {
      const account = await onFirst<{ id: string }>(words(commands.account).slice(1));
      const issued = await onFirst<{ secret: string }>(
        words(commands.key)
          .slice(1)
          .map((word) => (word === 'acc_…' ? account.id : word)),
      );
      key = issued.secret;
      assert.match(key, /^svc_/);

      const second = await startServer({
        DATA_DIR: path.join(work, 'data-second'),
        CONFIG_FILE: config,
        FIRST_ATELIER_KEY: key,
      });
      servers.push(second);
      // The second's first start prints its own admin key once, as the page says.
      const secondKey = firstRunKey(second);

      const cwd = newDir('atelier-recipe-client-');
      writeFileSync(path.join(cwd, 'hello.txt'), 'Hello from the second Atelier.\n');
      const env = { ...process.env, ATELIER_URL: second.url, ATELIER_API_KEY: secondKey };
      for (const [line, mime] of [
        [commands.image, 'image/png'],
        [commands.speech, 'audio/mpeg'],
      ] as const) {
        // `NAME=value node examples/x.mjs args…`, run from a directory of the person's own.
        const [assignment, , script, ...args] = words(line);
        const [name, value] = assignment!.split('=') as [string, string];
        const before = new Set(readdirSync(cwd));
        const { stdout } = await run(process.execPath, [path.join(root, script!), ...args], {
          cwd,
          env: { ...env, [name]: value },
          timeout: 120_000,
        });
        assert.match(stdout, /^finished 100%$/m, stdout);
        const written = readdirSync(cwd).filter((f) => !before.has(f));
        assert.equal(written.length, 1, stdout);
        const type = await fileTypeFromBuffer(readFileSync(path.join(cwd, written[0]!)));
        assert.equal(type?.mime, mime);
      }

      // The second charged its own price (2 credits an image, 1 per 50 characters); the
      // first charged its account `second-atelier` its price (1 an image, 1 per 100).
      assert.deepEqual(await balances(second.url, secondKey), { standard: 997 });
      const there = await onFirst<{ creditBalances: unknown }>(words(commands.show).slice(1));
      assert.deepEqual(there.creditBalances, [{ category: 'standard', amount: 998 }]);
    });

    it('without FIRST_ATELIER_KEY the second refuses to start, naming it, and creates nothing', async () => {
      const dataDir = path.join(work, 'data-unstarted');
      const result = await atelier(['serve'], { DATA_DIR: dataDir, CONFIG_FILE: config });
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        /^Invalid configuration:\n {2}- MODELS\[0\] \(mdl_first-sketch\): engineOptions\.apiKeyEnv names FIRST_ATELIER_KEY, which is not set/m,
      );
      assert.equal(existsSync(dataDir), false);
    });

    it('with a wrong key the task finishes with code 1, refunded, and the log says why', async () => {
      const second = await startServer({
        DATA_DIR: path.join(work, 'data-wrong-key'),
        CONFIG_FILE: config,
        FIRST_ATELIER_KEY: 'svc_not-a-key-of-the-first-atelier',
        LOG_LEVEL: 'info',
      });
      servers.push(second);
      const secondKey = firstRunKey(second);
      const submitted = await submitOk(second.url, secondKey, {
        modelId: 'mdl_first-sketch',
        prompt: 'a lighthouse at dawn',
        width: 512,
        height: 512,
      });
      const task = await waitForTask(second.url, secondKey, submitted.taskId);
      assert.equal(task.finishCode, FinishCode.EngineFailure);
      assert.match(task.finishMessage ?? '', /The model server failed\. Credits were refunded/);
      assert.deepEqual(await balances(second.url, secondKey), { standard: 1000 });
      await second.logged('answered HTTP 401');
    });
  });
});
