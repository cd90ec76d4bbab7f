import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { glibcMalloc } from '../../scripts/glibc-malloc.mjs';
import { configVariables, loadConfig } from '../../src/config/config.ts';

// Dockerfile and compose.yaml cannot be built here (no container runtime in CI); this checks
// what can be: that they set only variables Atelier reads, with values it accepts, and run
// only commands it has.

const root = new URL('../../', import.meta.url).pathname;
const read = (file: string) => readFileSync(`${root}${file}`, 'utf8');
const commands = ['serve', 'worker', 'migrate'];

/** Compose interpolation of `${NAME:-default}` and `${NAME}` with nothing set. */
function interpolate(value: string): string {
  return value.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_all, _name, fallback) => fallback ?? '');
}

interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string | number>;
}

describe('deployment files', () => {
  it('compose.yaml: every Atelier service sets known variables with valid values and runs a real command', () => {
    const compose = parse(read('compose.yaml'), { merge: true }) as {
      services: Record<string, ComposeService>;
    };
    const atelier = Object.entries(compose.services).filter(([, s]) => s.image === 'atelier');
    assert.deepEqual(atelier.map(([name]) => name).sort(), ['api', 'migrate', 'worker']);
    for (const [name, service] of atelier) {
      const env = Object.fromEntries(
        Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]),
      );
      for (const key of Object.keys(env))
        assert.ok(configVariables.includes(key), `${name}: ${key} is not a configuration variable`);
      assert.doesNotThrow(() => loadConfig({ env, cwd: '/app' }), `${name}'s environment`);
      assert.ok(commands.includes(service.command?.[0] ?? ''), `${name} runs ${service.command}`);
    }
  });

  it('Dockerfile: known variables, files that exist, and the command line as entry point', () => {
    const dockerfile = read('Dockerfile');
    const env = Object.fromEntries(
      [...dockerfile.matchAll(/^\s*(?:ENV\s+)?(\w+)=(\S+?)\s*\\?$/gm)].map((m) => [m[1]!, m[2]!]),
    );
    const atelierEnv = Object.fromEntries(
      Object.entries(env).filter(([key]) => !Object.hasOwn(glibcMalloc, key)),
    );
    assert.deepEqual(Object.keys(atelierEnv).sort(), ['DATA_DIR', 'HOST', 'NODE_ENV', 'PORT']);
    for (const key of Object.keys(atelierEnv)) assert.ok(configVariables.includes(key), key);
    assert.equal(loadConfig({ env: atelierEnv, cwd: '/app' }).port, 8080);
    // glibc's, not Atelier's: the malloc settings bin/atelier would otherwise restart with.
    for (const [key, value] of Object.entries(glibcMalloc)) assert.equal(env[key], value, key);
    assert.match(dockerfile, /^EXPOSE 8080$/m);
    for (const [, source] of dockerfile.matchAll(/^COPY (?!--from)(\S+) /gm))
      assert.ok(existsSync(`${root}${source}`), `COPY ${source}`);
    // `npm start`'s command line, V8 flags included, with CMD's `serve`.
    const entrypoint = JSON.parse(/^ENTRYPOINT (.+)$/m.exec(dockerfile)![1]!) as string[];
    const { scripts } = JSON.parse(read('package.json')) as { scripts: { start: string } };
    assert.deepEqual([...entrypoint, 'serve'], scripts.start.split(' '));
    assert.match(dockerfile, /^CMD \["serve"\]$/m);
  });

  it('Dockerfile: the image holds every file bin/atelier imports before its version check', () => {
    const dockerfile = read('Dockerfile');
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    const copied = [...runtime.matchAll(/^COPY (?!--from)(.+)$/gm)].flatMap((m) =>
      m[1]!.split(/\s+/).slice(0, -1),
    );
    const imported = [...read('bin/atelier').matchAll(/^import .* from '(\.\.\/[^']+)';$/gm)].map(
      (m) => m[1]!.slice('../'.length),
    );
    assert.ok(imported.length > 0, 'bin/atelier imports something');
    for (const file of imported) {
      assert.ok(
        copied.some((source) => file === source || file.startsWith(`${source}/`)),
        `${file} is not copied into the image`,
      );
    }
  });
});
