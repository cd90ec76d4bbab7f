import { ConfigError, loadProcessConfig } from '../config/config.ts';
import type { Core } from '../core.ts';
import { systemClock } from '../shared/clock.ts';
import { ErrorCode } from '../shared/errors.ts';
import { recordedIdpIssuer } from '../store/idp-issuer.store.ts';
import {
  instant,
  integer,
  oneOf,
  parseCredits,
  required,
  UsageError,
  type Values,
} from './arguments.ts';
import { parseDuration } from './duration.ts';

// Every command of `bin/atelier`, declared once: its name, its options, a line for `--help` and
// what it does for docs/cli.md (`npm run docs:cli` writes the table from here; a conformance
// test fails when the two drift apart). Operator commands carry what they run on a core.

export interface CommandSpec {
  /** The words that name it: `account grant`. */
  readonly name: string;
  /** Its options, as typed after the name. */
  readonly synopsis: string;
  /** One line for `atelier --help`. */
  readonly summary: string;
  /** What it does, for docs/cli.md (Markdown). */
  readonly description: string;
}

export type OperatorRun = (core: Core, values: Values, password: string | undefined) => unknown;

export interface OperatorCommandSpec extends CommandSpec {
  readonly run: OperatorRun;
}

/** How the docs name the error a bad value gets. */
const invalid = ErrorCode.InvalidInput;

/** The commands that are a process of their own (main.ts runs them). */
export const processCommands: readonly CommandSpec[] = [
  {
    name: 'serve',
    synopsis: '',
    summary: 'the API and in-process task workers (npm start)',
    description:
      'the API and `WORKER_CONCURRENCY` in-process task workers (what `npm start` runs); SIGTERM/SIGINT drain and close',
  },
  {
    name: 'worker',
    synopsis: '',
    summary: 'task workers only (PostgreSQL: any number of them)',
    description: 'task workers only, no HTTP; with PostgreSQL run as many as the queue needs',
  },
  {
    name: 'migrate',
    synopsis: '',
    summary: 'apply database migrations and exit',
    description: 'applies pending migrations, prints `{"applied":[…]}`',
  },
];

/** The commands run on a core: by this process, or by the server holding the embedded database. */
export const operatorCommands: readonly OperatorCommandSpec[] = [
  {
    name: 'account create',
    synopsis: '--alias A [--credits CATEGORY=N]… [--api-key-access] [--role user|admin]',
    summary: 'opens an account',
    description: 'opens an account',
    run: (core, v) =>
      core.services.accounts.create({
        alias: required(v.alias, '--alias'),
        role: oneOf(v.role ?? 'user', ['user', 'admin'] as const, '--role'),
        apiKeyAccess: v['api-key-access'] ?? false,
        credits: parseCredits(v.credits ?? []),
      }),
  },
  {
    name: 'account list',
    synopsis: '[--first N] [--after ALIAS]',
    summary: 'accounts by alias, with their balances',
    description:
      'accounts by alias with their balances, `{"accounts":[…],"next"}` (100 a page; `next` is the `--after` of the next page, null at the end)',
    run: (core, v) =>
      core.services.accounts.list(
        v.first === undefined ? 100 : integer(v.first, 'first'),
        v.after ?? null,
      ),
  },
  {
    name: 'account show',
    synopsis: '(--account ID | --alias A)',
    summary: 'one account, with its balances',
    description: 'one account with its balances',
    run: (core, v) => {
      if ((v.account === undefined) === (v.alias === undefined))
        throw new UsageError('Give one of --account ID or --alias A.');
      return core.services.accounts.show(
        v.account === undefined ? { alias: v.alias! } : { id: v.account },
      );
    },
  },
  {
    name: 'account grant',
    synopsis: '--account ID --category C --amount N [--reason R]',
    summary: 'adds credits, with a ledger row and an audit entry',
    description: `adds credits (a ledger row with the reason, and an audit entry), prints the new balance; a balance holds at most 1,000,000,000 per category (well inside GraphQL's 32-bit \`Int\`), so an amount or a grant past it is \`${invalid}\` on \`amount\` and changes nothing; so is an amount below 1 (\`--amount -5\` too) or not a number. The category must be one there is (below), or it is \`${invalid}\` on \`category\`, naming them`,
    run: (core, v) =>
      core.services.accounts.grant({
        accountId: required(v.account, '--account'),
        category: required(v.category, '--category'),
        amount: integer(required(v.amount, '--amount'), 'amount'),
        reference: v.reason,
      }),
  },
  {
    name: 'account deduct',
    synopsis: '--account ID --category C --amount N --reason R',
    summary: 'takes credits back, never below zero',
    description: `takes credits back (a \`deduction\` ledger row with the reason, and an audit entry), never below zero: more than the balance is \`${invalid}\` on \`amount\` and changes nothing`,
    run: (core, v) =>
      core.services.accounts.deduct({
        accountId: required(v.account, '--account'),
        category: required(v.category, '--category'),
        amount: integer(required(v.amount, '--amount'), 'amount'),
        reference: required(v.reason, '--reason'),
      }),
  },
  {
    name: 'account update',
    synopsis: '--account ID [--status active|suspended|deleted] [--[no-]api-key-access]',
    summary: 'changes an account',
    description: 'changes an account',
    run: (core, v) =>
      core.services.accounts.update(required(v.account, '--account'), {
        ...(v.status === undefined
          ? {}
          : { status: oneOf(v.status, ['active', 'suspended', 'deleted'] as const, '--status') }),
        ...(v['api-key-access'] === undefined ? {} : { apiKeyAccess: v['api-key-access'] }),
      }),
  },
  {
    name: 'apikey create',
    synopsis: '--account ID [--name N] [--expires-in 30m|12h|90d]',
    summary: 'issues a key; the secret is printed once',
    description: 'issues a key; the secret is printed once',
    run: (core, v) => {
      const expiresIn = v['expires-in'] === undefined ? null : parseDuration(v['expires-in']);
      if (expiresIn === null && v['expires-in'] !== undefined) {
        throw new UsageError('--expires-in takes a duration such as 30m, 12h or 90d.');
      }
      return core.services.apiKeys.issue(required(v.account, '--account'), {
        name: v.name ?? 'cli',
        expiresAt: expiresIn === null ? null : new Date(systemClock.now().getTime() + expiresIn),
      });
    },
  },
  {
    name: 'apikey list',
    synopsis: '--account ID',
    summary: "the account's keys (never a secret)",
    description:
      "the account's keys: name, prefix, created, last used, expiry, revocation, limits; never a secret",
    run: (core, v) => core.services.apiKeys.listOf(required(v.account, '--account')),
  },
  {
    name: 'apikey revoke',
    synopsis: '--account ID --key KEY_ID',
    summary: 'the key stops on its next request, on every node',
    description:
      'revokes a key of the account (an audit entry); it stops on its next request, on every node',
    run: (core, v) =>
      core.services.apiKeys.revokeOf(required(v.account, '--account'), required(v.key, '--key')),
  },
  {
    name: 'audit',
    synopsis: '[--account ID] [--action A] [--since T] [--until T] [--first N] [--after CURSOR]',
    summary: 'the audit log, newest first',
    description:
      'the audit log, newest first, as `{"nodes":[…],"pageInfo":{"hasNextPage","endCursor"}}` (50 a page; `endCursor` is the next `--after`); times are ISO 8601 (`2031-01-01` or `2031-01-01T12:00:00Z`)',
    run: (core, v) =>
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
  },
  {
    name: 'idp user add',
    synopsis: '--account ID --email E --password-stdin',
    summary: 'a sign-in for the built-in identity provider',
    description:
      "a sign-in for the built-in identity provider (password: 10+ characters, one line on stdin), under the data store's issuer",
    run: async (core, v, password) => {
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
  },
  {
    name: 'oauth rotate-key',
    synopsis: '',
    summary: 'a new signing key for MCP access tokens (old ones verify until they expire)',
    description:
      'a new signing key for MCP access tokens; the previous one stays published until its tokens expire',
    run: async (core) => {
      const kid = await core.oauth.keys.rotate();
      await core.services.audit.record({
        accountId: null,
        action: 'oauth.signing_key_rotated',
        target: kid,
        detail: null,
      });
      return { kid, jwks: core.oauth.keys.jwks };
    },
  },
  {
    name: 'models reload',
    synopsis: '',
    summary: 'check MODELS (CONFIG_FILE) again and use it on every node, or list its problems',
    description:
      'reads `CONFIG_FILE` again and puts its `MODELS` in use on every node, or changes nothing and lists every problem (see [Operating Atelier](operating.md#models-without-a-restart))',
    run: (core) => core.modelsReload.reload(loadProcessConfig()),
  },
  {
    name: 'usage',
    synopsis:
      '--from DATE --to DATE [--group-by day,model] [--account ID] [--model M] [--kind K] [--backend B] [--credential C]',
    summary: 'usage of [from, to) by dimension (docs/usage.md)',
    description: `the usage report of [from, to) (see [Usage report](usage.md)), \`{"rows":[…]}\`; a bad range, date, dimension or kind is \`${invalid}\` naming it`,
    run: async (core, v) => ({
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
  },
];

/** Every command, in the order --help and docs/cli.md list them. */
export const commands: readonly CommandSpec[] = [...processCommands, ...operatorCommands];

/** Every command's name. */
export function commandNames(): string[] {
  return commands.map((c) => c.name);
}

/** The operator command of that name; undefined for any other word (`constructor` included). */
export function operatorCommand(name: string): OperatorCommandSpec | undefined {
  return operatorCommands.find((c) => c.name === name);
}

/** Where `--help` starts a command's summary; a longer command line puts it on the next line. */
const summaryColumn = 42;

/** The help text `atelier --help` prints. */
export function usageText(): string {
  const lines = commands.flatMap((c) => {
    const line = `  ${[c.name, c.synopsis].filter(Boolean).join(' ')}`;
    if (line.length < summaryColumn - 1) return [`${line.padEnd(summaryColumn)}${c.summary}`];
    return [line, `${' '.repeat(summaryColumn)}${c.summary}`];
  });
  return `Usage: atelier <command> [options]

Commands:
${lines.join('\n')}

Operator commands print JSON. With the embedded database and a server running on it, they run
in that server (through DATA_DIR/control/atelier.sock, the data directory owner's only).
Configuration comes from the environment (see docs/configuration.md).`;
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
