import { parseArgs } from 'node:util';
import { type Config, ConfigError, loadConfig } from '../config/config.ts';
import { buildCore, type Core, databaseLocation, migrateUnbounded } from '../core.ts';
import { systemClock } from '../shared/clock.ts';
import { AppError, ErrorCode, invalidInput } from '../shared/errors.ts';
import { parseInstant } from '../shared/instant.ts';
import { assertAcceptableText } from '../shared/text-input.ts';
import { DataDirInUseError } from '../store/data-dir-lock.ts';
import { ownerOnlyUmask, restrictToOwner } from '../store/data-dir-modes.ts';
import { openDatabase } from '../store/database.ts';
import { recordedIdpIssuer } from '../store/idp-issuer.store.ts';
import {
  askServer,
  type ControlAnswer,
  type ControlRequest,
  listenForCommands,
} from './control-socket.ts';
import { parseDuration } from './duration.ts';

const usage = `Usage: atelier <command> [options]

Commands:
  serve                                   the API and in-process task workers (npm start)
  worker                                  task workers only (PostgreSQL: any number of them)
  migrate                                 apply database migrations and exit
  account create --alias A [--credits CATEGORY=N]... [--api-key-access] [--role user|admin]
  account list [--first N] [--after ALIAS]  accounts by alias, with their balances
  account show --account ID | --alias A   one account, with its balances
  account grant --account ID --category C --amount N [--reason R]
  account deduct --account ID --category C --amount N --reason R
  account update --account ID [--status active|suspended|deleted] [--[no-]api-key-access]
  apikey create --account ID [--name N] [--expires-in 30m|12h|90d]
  apikey list --account ID                the account's keys (never a secret)
  apikey revoke --account ID --key KEY_ID the key stops on its next request, on every node
  audit [--account ID] [--action A] [--since T] [--until T] [--first N] [--after CURSOR]
                                          the audit log, newest first
  idp user add --account ID --email E --password-stdin
  oauth rotate-key                        a new signing key for MCP access tokens (old ones verify until they expire)
  models reload                           check MODELS (CONFIG_FILE) again and use it on every node, or list its problems
  usage --from DATE --to DATE [--group-by day,model] [--account ID] [--model M] [--kind K]
        [--backend B] [--credential C]    usage of [from, to) by dimension (docs/usage.md)

Operator commands print JSON. With the embedded database and a server running on it, they run
in that server (through DATA_DIR/control/atelier.sock, the data directory owner's only).
Configuration comes from the environment (see docs/configuration.md).`;

/** Thrown for a command line that cannot be run; printed with the usage. */
class UsageError extends Error {}

const options = {
  alias: { type: 'string' },
  credits: { type: 'string', multiple: true },
  'api-key-access': { type: 'boolean' },
  role: { type: 'string' },
  account: { type: 'string' },
  category: { type: 'string' },
  amount: { type: 'string' },
  status: { type: 'string' },
  name: { type: 'string' },
  'expires-in': { type: 'string' },
  email: { type: 'string' },
  first: { type: 'string' },
  after: { type: 'string' },
  reason: { type: 'string' },
  key: { type: 'string' },
  action: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  from: { type: 'string' },
  to: { type: 'string' },
  'group-by': { type: 'string' },
  model: { type: 'string' },
  kind: { type: 'string' },
  backend: { type: 'string' },
  credential: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<
  typeof parseArgs<{ options: typeof options; allowPositionals: true }>
>['values'];

export async function main(argv: readonly string[]): Promise<number> {
  // Before anything is written: whatever this process creates is its owner's only.
  process.umask(ownerOnlyUmask);
  try {
    const { values, positionals } = parseArgs({
      args: negativeValuesJoined(argv),
      options,
      allowPositionals: true,
      allowNegative: true,
    });
    // Every argument is client text like any other (120001 naming the option).
    assertAcceptableText(values, '');
    const command = positionals.join(' ');
    if (values.help || command === '' || command === 'help') {
      console.log(usage);
      return 0;
    }
    const config = loadConfig({ env: process.env, cwd: process.cwd() });
    repairDataDirModes(config.dataDir);
    // Loaded here, not at the top: the HTTP stack (Fastify, Mercurius, the schema, MCP) is a
    // third of the start of an operator command that never serves.
    if (command === 'serve') {
      const location = databaseLocation(config);
      const dataDir = location.backend === 'pglite' ? location.dataDir : null;
      await (await import('../main.ts')).serve(config, {
        // Operator commands reach the embedded database through the server holding it.
        listening: (core) =>
          dataDir === null
            ? Promise.resolve(undefined)
            : listenForCommands(dataDir, (request) => answerCommand(core, request)),
        reloadSource: readConfigAgain,
      });
      return 0;
    }
    if (command === 'worker') {
      await (await import('../main.ts')).work(config, readConfigAgain);
      return 0;
    }
    if (command === 'migrate') {
      printJson({ applied: await migrate(config) });
      return 0;
    }
    if (operatorCommand(command) === undefined)
      throw new UsageError(`Unknown command "${command}".`);
    // Read here, before the database is opened: a running server may be the one to use it.
    const password =
      command === 'idp user add' && values['password-stdin'] ? await readPassword() : undefined;
    const location = databaseLocation(config);
    let core: Core;
    try {
      core = await buildCore(config);
    } catch (error) {
      // The embedded database is a running server's: that server runs the command.
      if (error instanceof DataDirInUseError && location.backend === 'pglite' && location.dataDir) {
        const answer = await askServer(location.dataDir, { command, values, password }).catch(
          () => {
            throw error;
          },
        );
        printJson(resultOf(answer));
        return 0;
      }
      throw error;
    }
    try {
      printJson(await runOperatorCommand(core, { command, values, password }));
    } finally {
      await core.close();
    }
    return 0;
  } catch (error) {
    return report(error);
  }
}

/**
 * A data directory written before its files were kept owner-only (or opened up by hand) is
 * made so before it is used, and the log says so once: other local users could read the
 * embedded database, signing keys included, and change it.
 */
function repairDataDirModes(dataDir: string): void {
  const changed = restrictToOwner(dataDir);
  if (changed === 0) return;
  console.warn(
    `WARNING: ${changed} entries under DATA_DIR ${dataDir} were open to other users; they are ` +
      'now the owner\'s only (directories 0700, files 0600). See docs/operating.md, "The data ' +
      'directory", if other people can log in on this machine.',
  );
}

/**
 * Runs an operator command on `core`. Failures the command line explains (an AppError, a usage
 * or configuration problem) pass; anything else becomes 190000: what failed inside (a database
 * message, a stack) is not the answer (DESIGN.md rule 6); the code is what scripts switch on.
 */
async function runOperatorCommand(core: Core, request: ControlRequest): Promise<unknown> {
  const run = operatorCommand(request.command);
  if (run === undefined) throw new UsageError(`Unknown command "${request.command}".`);
  try {
    return await run(core, request.values as Values, request.password);
  } catch (error) {
    if (error instanceof AppError || error instanceof UsageError || error instanceof ConfigError)
      throw error;
    throw new AppError(ErrorCode.Internal, 'Internal error: the command did not complete.');
  }
}

/** A request from the control socket, run by the server as the command line would run it. */
async function answerCommand(core: Core, request: ControlRequest): Promise<ControlAnswer> {
  try {
    return { ok: true, result: await runOperatorCommand(core, request) };
  } catch (error) {
    if (error instanceof AppError)
      return {
        ok: false,
        error: { kind: 'app', code: error.code, message: error.message, details: error.details },
      };
    if (error instanceof ConfigError)
      return { ok: false, error: { kind: 'config', problems: error.problems } };
    return { ok: false, error: { kind: 'usage', message: (error as Error).message } };
  }
}

/** The running server's answer as the command line's own outcome: a result, or its error. */
function resultOf(answer: ControlAnswer): unknown {
  if (answer.ok) return answer.result;
  const { error } = answer;
  if (error.kind === 'app')
    throw new AppError(error.code as ErrorCode, error.message, error.details);
  if (error.kind === 'config') throw new ConfigError(error.problems);
  throw new UsageError(error.message);
}

/** Every command's name: the process commands and the operator commands (docs/cli.md lists each). */
export function commandNames(): string[] {
  return ['serve', 'worker', 'migrate', ...Object.keys(operatorCommands)];
}

/** The help text `atelier --help` prints. */
export function usageText(): string {
  return usage;
}

/**
 * The command of that name among the table's own entries: `constructor`, `__proto__` or
 * `toString` are names an object inherits, not commands (`constructor` once printed the whole
 * core, the database URL included).
 */
function operatorCommand(name: string): OperatorCommand | undefined {
  return Object.hasOwn(operatorCommands, name) ? operatorCommands[name] : undefined;
}

type OperatorCommand = (
  core: Core,
  values: Values,
  password: string | undefined,
) => Promise<unknown>;

const operatorCommands: Record<
  string,
  (core: Core, values: Values, password: string | undefined) => Promise<unknown>
> = {
  'oauth rotate-key': async (core) => {
    const kid = await core.oauth.keys.rotate();
    await core.services.audit.record({
      accountId: null,
      action: 'oauth.signing_key_rotated',
      target: kid,
      detail: null,
    });
    return { kid, jwks: core.oauth.keys.jwks };
  },
  'idp user add': async (core, v, password) => {
    const idp = core.services.identityProvider;
    if (idp === null) throw await externalIssuerRefusal(core);
    if (!v['password-stdin'] || password === undefined)
      throw new UsageError('--password-stdin is required: pipe the password on standard input.');
    const user = await idp.addUser({
      accountId: required(v.account, '--account'),
      email: required(v.email, '--email'),
      password,
    });
    await core.services.audit.record({
      accountId: user.accountId,
      action: 'idp.user_added',
      target: user.email,
      detail: null,
    });
    return user;
  },
  'account create': (core, v) =>
    core.services.accounts.create({
      alias: required(v.alias, '--alias'),
      role: oneOf(v.role ?? 'user', ['user', 'admin'] as const, '--role'),
      apiKeyAccess: v['api-key-access'] ?? false,
      credits: parseCredits(v.credits ?? []),
    }),
  'account list': (core, v) =>
    core.services.accounts.list(
      v.first === undefined ? 100 : integer(v.first, 'first'),
      v.after ?? null,
    ),
  'account show': (core, v) => {
    if ((v.account === undefined) === (v.alias === undefined))
      throw new UsageError('Give one of --account ID or --alias A.');
    return core.services.accounts.show(
      v.account === undefined ? { alias: v.alias! } : { id: v.account },
    );
  },
  'account grant': (core, v) =>
    core.services.accounts.grant({
      accountId: required(v.account, '--account'),
      category: required(v.category, '--category'),
      amount: integer(required(v.amount, '--amount'), 'amount'),
      reference: v.reason,
    }),
  'account deduct': (core, v) =>
    core.services.accounts.deduct({
      accountId: required(v.account, '--account'),
      category: required(v.category, '--category'),
      amount: integer(required(v.amount, '--amount'), 'amount'),
      reference: required(v.reason, '--reason'),
    }),
  audit: (core, v) =>
    core.services.audit.listAll(
      {
        accountId: v.account,
        action: v.action,
        since: v.since === undefined ? undefined : instant(v.since, 'since'),
        until: v.until === undefined ? undefined : instant(v.until, 'until'),
      },
      v.first === undefined ? 50 : integer(v.first, 'first'),
      v.after,
    ),
  'account update': (core, v) =>
    core.services.accounts.update(required(v.account, '--account'), {
      ...(v.status === undefined
        ? {}
        : { status: oneOf(v.status, ['active', 'suspended', 'deleted'] as const, '--status') }),
      ...(v['api-key-access'] === undefined ? {} : { apiKeyAccess: v['api-key-access'] }),
    }),
  usage: async (core, v) => ({
    rows: await core.services.usage.operatorReportOfText({
      from: v.from,
      to: v.to,
      groupBy: v['group-by'],
      accountId: v.account,
      modelId: v.model,
      kind: v.kind,
      backend: v.backend,
      credential: v.credential,
    }),
  }),
  'models reload': (core) => core.modelsReload.reload(readConfigAgain()),
  'apikey revoke': (core, v) =>
    core.services.apiKeys.revokeOf(required(v.account, '--account'), required(v.key, '--key')),
  'apikey list': (core, v) => core.services.apiKeys.listOf(required(v.account, '--account')),
  'apikey create': async (core, v) => {
    const expiresIn = v['expires-in'] === undefined ? null : parseDuration(v['expires-in']);
    if (expiresIn === null && v['expires-in'] !== undefined) {
      throw new UsageError('--expires-in takes a duration such as 30m, 12h or 90d.');
    }
    return core.services.apiKeys.issue(required(v.account, '--account'), {
      name: v.name ?? 'cli',
      expiresAt: expiresIn === null ? null : new Date(systemClock.now().getTime() + expiresIn),
    });
  },
};

/**
 * The configuration as it is now (`CONFIG_FILE` read again): what `models reload` and SIGHUP
 * put in use. Every problem of it is listed, as at start, and nothing changes.
 */
function readConfigAgain(): Config {
  return loadConfig({ env: process.env, cwd: process.cwd() });
}

/**
 * `idp user add` with `IDP_ISSUER` set: this shell names an external provider, where people are
 * added, while the data store may belong to a server using the built-in one (a shell left with
 * another deployment's settings). Refused before anything is written, naming both issuers and
 * the way out.
 */
async function externalIssuerRefusal(core: Core): Promise<ConfigError> {
  const external = core.config.identity.issuer;
  const builtin = await recordedIdpIssuer(core.database.db);
  return new ConfigError([
    `IDP_ISSUER: ${external} is an external identity provider, so the built-in one is off here and people are added at ${external}.` +
      (builtin === undefined
        ? ''
        : ` This data store's built-in provider has the issuer ${builtin}: if the server runs without IDP_ISSUER, run this command without IDP_ISSUER too.`),
  ]);
}

async function readPassword(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One line: a trailing newline (echo, a here-string) is not part of the password.
  const password = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  assertAcceptableText(password, 'password');
  return password;
}

async function migrate(config: Config): Promise<string[]> {
  const location = databaseLocation(config);
  const database = await openDatabase(location);
  try {
    return await migrateUnbounded(database, location);
  } finally {
    await database.close();
  }
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError(`${flag} is required.`);
  return value;
}

function oneOf<T extends string>(value: string, allowed: readonly T[], flag: string): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`${flag} must be one of ${allowed.join(', ')}.`);
  }
  return value as T;
}

/**
 * A whole number, negative ones included: what is allowed (a grant adds at least 1) is the
 * service's rule, answered as the JSON error (120001) every bad value gets.
 */
function integer(value: string, field: string): number {
  if (!/^-?\d{1,15}$/.test(value))
    throw invalidInput([{ field, message: 'must be a whole number' }]);
  return Number(value);
}

/**
 * The arguments with a negative number after an option joined to it (`--amount -5` becomes
 * `--amount=-5`): parseArgs takes `-5` for an option of its own and refuses the line, so the
 * value would never reach the check that explains what is wrong with it.
 */
function negativeValuesJoined(argv: readonly string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    const name = arg.slice(2);
    const takesValue =
      Object.hasOwn(options, name) &&
      (options as Record<string, { type: string }>)[name]!.type === 'string';
    if (arg.startsWith('--') && takesValue && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      i += 1;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/** An ISO 8601 time such as 2026-11-01 or 2026-11-01T12:00:00Z; 120001 naming the field. */
function instant(value: string, field: string): Date {
  const at = parseInstant(value);
  if (at === null)
    throw invalidInput([{ field, message: 'must be a time such as 2026-11-01T00:00:00Z' }]);
  return at;
}

function parseCredits(entries: readonly string[]): Record<string, number> {
  const credits: Record<string, number> = {};
  for (const entry of entries) {
    const match = /^([^=]+)=(\d+)$/.exec(entry);
    if (match?.[1] === undefined)
      throw new UsageError(`--credits takes CATEGORY=N, got "${entry}".`);
    credits[match[1]] = Number(match[2]);
  }
  return credits;
}

function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

function report(error: unknown): number {
  if (error instanceof AppError) {
    console.error(
      JSON.stringify({ error: { code: error.code, message: error.message, ...error.details } }),
    );
  } else if (
    error instanceof UsageError ||
    (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
  ) {
    console.error(`${(error as Error).message}\n\n${usage}`);
    return 2;
  } else if (error instanceof ConfigError || error instanceof DataDirInUseError) {
    console.error(error.message);
  } else {
    console.error(error);
  }
  return 1;
}
