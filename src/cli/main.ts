import { parseArgs } from 'node:util';
import { type Config, ConfigError, loadProcessConfig } from '../config/config.ts';
import { buildCore, type Core } from '../core.ts';
import { AppError, ErrorCode } from '../shared/errors.ts';
import { StartupError } from '../shared/startup-error.ts';
import { assertAcceptableText } from '../shared/text-input.ts';
import { DataDirInUseError } from '../store/data-dir-lock.ts';
import { ownerOnlyUmask, restrictToOwner } from '../store/data-dir-modes.ts';
import { openDatabase } from '../store/database.ts';
import { databaseLocation, migrateUnbounded } from '../store/database-location.ts';
import { negativeValuesJoined, options, UsageError, type Values } from './arguments.ts';
import { operatorCommand, usageText } from './commands.ts';
import {
  askServer,
  type ControlAnswer,
  type ControlRequest,
  listenForCommands,
} from './control-socket.ts';

// `bin/atelier`: parses the command line, runs a process command (serve, worker, migrate) or an
// operator command (commands.ts) on a core of its own or, with the embedded database in use by
// a running server, in that server over the control socket; prints JSON, or the error.

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
      console.log(usageText());
      return 0;
    }
    const config = loadProcessConfig();
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
        reloadSource: loadProcessConfig,
      });
      return 0;
    }
    if (command === 'worker') {
      await (await import('../main.ts')).work(config, loadProcessConfig);
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
  const command = operatorCommand(request.command);
  if (command === undefined) throw new UsageError(`Unknown command "${request.command}".`);
  try {
    return await command.run(core, request.values as Values, request.password);
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
    console.error(`${(error as Error).message}\n\n${usageText()}`);
    return 2;
  } else if (
    error instanceof ConfigError ||
    error instanceof DataDirInUseError ||
    error instanceof StartupError
  ) {
    console.error(error.message);
  } else {
    console.error(error);
  }
  return 1;
}
