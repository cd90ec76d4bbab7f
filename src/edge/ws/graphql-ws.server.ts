import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import {
  execute,
  GraphQLError,
  type GraphQLSchema,
  parse,
  specifiedRules,
  validate,
} from 'graphql';
import { CloseCode, type Context, type SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { isWellFormedApiKey } from '../../auth/api-key.ts';
import { type AuthResult, type GraphqlCredentials, withAddress } from '../../auth/authenticate.ts';
import type { QueryLimits } from '../../config/query-limits.ts';
import type { OutageLog } from '../../observability/outage-log.ts';
import { contextFrom, type OpenSpan, openSpan, withContext } from '../../observability/tracing.ts';
import { clientAddressKey } from '../../shared/client-address.ts';
import { invalidInput } from '../../shared/errors.ts';
import { findTextProblem } from '../../shared/text-input.ts';
import type { GraphqlContext } from '../graphql/context.ts';
import { appErrorExtensions, logRefusal, toGraphqlError } from '../graphql/error-formatter.ts';
import { checkSource, limitRules } from '../graphql/limits.ts';
import { submissionsIn } from '../graphql/submissions.ts';
import type { RateLimitRefusal } from '../http/rate-limits.ts';
import type { Services } from '../services.ts';
import { operationErrors, rateLimited, unexpectedError } from './operation-errors.ts';
import { createSharedSubscribe } from './shared-execution.ts';

/** RFC 6455 §7.4.1: the server is going down; graphql-ws names only its own 44xx codes. */
const goingAway = 1001;

/** What graphql-ws hands every hook of one connection. */
type ConnectContext = Context<
  { idpToken?: unknown } | undefined,
  { socket: import('ws').WebSocket; request: IncomingMessage }
>;

export interface WebSocketLimits {
  /** Concurrent operations on one connection. */
  perConnection: number;
  /** Concurrent subscriptions of one account on this node. */
  perAccount: number;
  /** Largest message accepted, in bytes. */
  maxPayload: number;
  /** A connection with more unsent data than this is closed (a slow consumer). */
  maxBuffered: number;
  /** How often open connections have their credentials checked again. */
  recheckMs: number;
}

export const defaultWebSocketLimits: WebSocketLimits = {
  perConnection: 50,
  perAccount: 1_000,
  maxPayload: 64 * 1024, // 64 KiB
  maxBuffered: 1024 * 1024, // 1 MiB
  recheckMs: 5_000, // 5 seconds
};

interface Connection {
  readonly id: string;
  readonly credentials: GraphqlCredentials;
  /** The client's address, on every operation's actor (the audit log's "from where"). */
  readonly address: string;
  accountId: string | null;
  /** Operations admitted and not yet complete (graphql-ws also lists refused ones). */
  readonly operations: Set<string>;
}

/**
 * `graphql-transport-ws` on `/graphql` with graphql-ws's own server (its close codes follow the
 * protocol: 4400, 4401, 4403, 4408, 4409, 4429, 4500), on the same schema as HTTP. Credentials
 * (handshake `Authorization: Bearer <API key>`, or `connection_init.payload.idpToken`) are
 * checked at initialisation, before every operation, and every `recheckMs` while the socket is
 * open: a credential that stopped being good closes the connection with 4403.
 */
export function attachGraphqlWebSocket(options: {
  schema: GraphQLSchema;
  services: Services;
  log: FastifyBaseLogger;
  /** Where expected faults (the database away) are logged once and counted. */
  outages: OutageLog;
  queryLimits: QueryLimits;
  limits?: Partial<WebSocketLimits>;
  /**
   * Counts `hits` operations of a caller (an account id, or `ip:<address>`) in the same window
   * as its HTTP requests; a refusal when over the limit.
   */
  countOperations?: (caller: string, hits: number) => Promise<RateLimitRefusal | null>;
  /** The client's address, by the same proxy rules as HTTP requests (`TRUST_PROXY`). */
  clientAddress?: (request: IncomingMessage) => string;
}) {
  const limits = { ...defaultWebSocketLimits, ...options.limits };
  const clientAddress =
    options.clientAddress ?? ((request) => request.socket.remoteAddress ?? 'unknown');
  const { services, log, outages } = options;
  // "Did you mean …?" hints name the schema; they go where introspection is off, as over HTTP.
  const wording = { suggestions: options.queryLimits.introspection };
  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxPayload });
  const connections = new WeakMap<object, Connection>();
  const perAccount = new Map<string, number>();
  const active = new Map<string, { accountId: string }>(); // `${connection}:${operation}` → owner
  // One execution per event for the subscriptions that would compute the same update.
  const subscribeTo = createSharedSubscribe();

  /** Authenticates; why a credential was refused goes to the log under `requestId`. */
  const authenticate = async (
    credentials: GraphqlCredentials,
    requestId: string,
  ): Promise<AuthResult> => {
    const auth = await services.graphqlAuth.authenticate(credentials);
    logRefusal(log.child({ reqId: requestId }), auth, outages);
    return auth;
  };
  const release = (key: string) => {
    const owner = active.get(key);
    if (owner === undefined) return;
    active.delete(key);
    perAccount.set(owner.accountId, (perAccount.get(owner.accountId) ?? 1) - 1);
  };

  /** connection_init: the credential of the handshake or of the payload, checked once. */
  async function connect(ctx: ConnectContext, connectionId: string): Promise<boolean> {
    const idpToken = ctx.connectionParams?.idpToken;
    if (
      idpToken !== undefined &&
      (typeof idpToken !== 'string' || isWellFormedApiKey(idpToken) || idpToken.startsWith('svc_'))
    ) {
      return false; // An API key does not belong in idpToken (spec §5.3).
    }
    const credentials = {
      authorization: ctx.extra.request.headers.authorization,
      idpToken: idpToken as string | undefined,
    };
    const auth = await authenticate(credentials, `ws:${connectionId}`);
    if (auth.kind === 'refused' && auth.error.retryable) {
      // 100102: the credential may well be good; 4403 would tell the client otherwise.
      // 4500 is graphql-ws's "server error", which its clients may retry.
      ctx.extra.socket.close(
        CloseCode.InternalServerError,
        `${auth.error.code}: ${auth.error.message}`,
      );
      return false;
    }
    if (auth.kind === 'refused') return false;
    const connection: Connection = {
      id: connectionId,
      credentials,
      address: clientAddress(ctx.extra.request),
      accountId: auth.kind === 'actor' ? auth.actor.accountId : null,
      operations: new Set(),
    };
    connections.set(ctx, connection);
    watchConnection(ctx, connection);
    return true;
  }

  /** One operation, refused here (as its own error) or let through to execution. */
  async function subscribe(
    ctx: ConnectContext,
    id: string,
    payload: SubscribePayload,
  ): Promise<GraphQLError[] | undefined> {
    const connection = connections.get(ctx);
    if (connection === undefined) return [new GraphQLError('Not initialised.')];
    // Reserve the place before any await, so operations sent together cannot all squeeze in.
    if (connection.operations.size >= limits.perConnection) {
      return [rateLimited(`At most ${limits.perConnection} operations per connection.`)];
    }
    connection.operations.add(id);
    // The request id of the operation's context, so the log line and the error agree.
    const requestId = operationId(ctx, id);
    const refuse = (errors: GraphQLError[]) => {
      connection.operations.delete(id);
      return errors;
    };
    const tooLarge = checkSource(payload.query, options.queryLimits);
    if (tooLarge !== null) {
      return refuse([
        new GraphQLError(tooLarge.message, { extensions: appErrorExtensions(tooLarge, requestId) }),
      ]);
    }
    // graphql-ws parses after this hook and, on a syntax error, closes the whole socket
    // (4500): a document that does not parse is refused here, as that operation's error.
    try {
      parse(payload.query, { noLocation: true });
    } catch (error) {
      if (error instanceof GraphQLError) return refuse([error]);
      throw error;
    }
    const badText = findTextProblem(payload.variables ?? null, '');
    if (badText !== null) {
      const error = invalidInput([badText]);
      return refuse([
        new GraphQLError(error.message, { extensions: appErrorExtensions(error, requestId) }),
      ]);
    }
    const auth = withAddress(
      await authenticate(connection.credentials, requestId),
      connection.address,
    );
    if (auth.kind === 'refused') {
      return refuse([
        new GraphQLError(auth.error.message, {
          extensions: appErrorExtensions(auth.error, requestId),
        }),
      ]);
    }
    // Every operation counts against the caller's window like an HTTP request (one per
    // generation it submits; a subscription once, when it starts). A refusal ends only this
    // operation: the socket stays open for the next one.
    const caller =
      auth.kind === 'actor'
        ? auth.actor.accountId
        : `ip:${clientAddressKey(clientAddress(ctx.extra.request))}`;
    const hits = Math.max(1, submissionsIn(payload.query, payload.operationName));
    const limited = await options.countOperations?.(caller, hits);
    if (limited != null) return refuse([rateLimited(limited.message, limited.retryAfterSeconds)]);
    if (auth.kind === 'actor' && /^\s*subscription\b/.test(payload.query)) {
      const count = perAccount.get(auth.actor.accountId) ?? 0;
      if (count >= limits.perAccount)
        return refuse([rateLimited(`At most ${limits.perAccount} subscriptions per account.`)]);
      perAccount.set(auth.actor.accountId, count + 1);
      active.set(`${connection.id}:${id}`, { accountId: auth.actor.accountId });
    }
    operationAuth.set(`${connection.id}:${id}`, auth);
    return undefined;
  }

  /** The request id of one operation: its connection's and its own, as the log shows it. */
  const operationId = (ctx: ConnectContext, id: string) =>
    `ws:${connections.get(ctx)?.id ?? '?'}:${id}`;

  const server = useServer<{ idpToken?: unknown } | undefined, { connection?: Connection }>(
    {
      schema: options.schema,
      connectionInitWaitTimeout: 3_000,
      validate: (schema, document) =>
        validate(schema, document, [...specifiedRules, ...limitRules(options.queryLimits)]),
      onConnect: async (ctx) => {
        const connectionId = randomUUID();
        try {
          return await connect(ctx, connectionId);
        } catch (error) {
          const failure = unexpectedError(error, `ws:${connectionId}`, log, outages);
          ctx.extra.socket.close(CloseCode.InternalServerError, `${failure.code}: Internal error`);
          return false;
        }
      },
      onSubscribe: async (ctx, id, payload) => {
        // One server span per operation, in the trace the handshake's `traceparent` names.
        const span = openSpan('graphql-ws operation', {
          kind: 'server',
          parent: contextFrom(ctx.extra.request.headers),
          attributes: {
            'atelier.request_id': operationId(ctx, id),
            ...(payload.operationName ? { 'graphql.operation.name': payload.operationName } : {}),
          },
        });
        if (span !== null) spans.set(operationId(ctx, id), span);
        try {
          const refused = await subscribe(ctx, id, payload);
          if (refused !== undefined) endSpan(operationId(ctx, id), 'refused');
          return refused;
        } catch (error) {
          endSpan(operationId(ctx, id), 'error');
          const connection = connections.get(ctx);
          connection?.operations.delete(id);
          release(`${connection?.id}:${id}`);
          operationAuth.delete(`${connection?.id}:${id}`);
          const failure = unexpectedError(error, operationId(ctx, id), log, outages);
          return [new GraphQLError(failure.message, { originalError: failure })];
        }
      },
      // Execution runs in the operation's span, so what it calls (a submission) is its child.
      execute: (args) =>
        withContext(spanOf(args.contextValue)?.context ?? null, () => execute(args)),
      subscribe: (args) =>
        withContext(spanOf(args.contextValue)?.context ?? null, () => subscribeTo(args)),
      context: (ctx, id): GraphqlContext => {
        const connection = connections.get(ctx)!;
        const auth = operationAuth.get(`${connection.id}:${id}`) ?? { kind: 'anonymous' };
        const requestId = operationId(ctx, id);
        return { auth, requestId, services, log: log.child({ reqId: requestId }) };
      },
      // Debug lines that mark when an operation passed every check and when it ended: what an
      // operator reads, and what tests wait for instead of sleeping.
      onOperation: (ctx, id) => {
        const connection = connections.get(ctx);
        const auth = connection && operationAuth.get(`${connection.id}:${id}`);
        log.debug(
          {
            reqId: `ws:${connection?.id ?? '?'}:${id}`,
            accountId: auth?.kind === 'actor' ? auth.actor.accountId : null,
          },
          'operation started',
        );
      },
      onNext: (ctx, id, _payload, _args, result) => {
        // A consumer that does not read cannot make us buffer without bound.
        if (ctx.extra.socket.bufferedAmount > limits.maxBuffered) {
          ctx.extra.socket.close(CloseCode.InternalServerError, 'Consumer too slow');
        }
        if (result.errors === undefined) return;
        // The same error codes as over HTTP.
        const requestId = operationId(ctx, id);
        return {
          ...result,
          errors: result.errors.map((error) =>
            toGraphqlError(error, requestId, log, outages, wording),
          ),
        };
      },
      onComplete: (ctx, id) => {
        endSpan(operationId(ctx, id), null);
        const connection = connections.get(ctx);
        if (connection === undefined) return;
        const auth = operationAuth.get(`${connection.id}:${id}`);
        operationAuth.delete(`${connection.id}:${id}`);
        connection.operations.delete(id);
        release(`${connection.id}:${id}`);
        log.debug(
          {
            reqId: `ws:${connection.id}:${id}`,
            accountId: auth?.kind === 'actor' ? auth.actor.accountId : null,
          },
          'operation ended',
        );
      },
      // Errors before execution (parse, validation, limits): 120001 unless they carry a code.
      onError: (ctx, id, _payload, errors) => {
        endSpan(operationId(ctx, id), 'error');
        return operationErrors(errors, operationId(ctx, id), wording);
      },
    },
    wss,
  );
  const operationAuth = new Map<string, AuthResult>();
  /** Each traced operation's span, by its request id; none when tracing is off. */
  const spans = new Map<string, OpenSpan>();
  const spanOf = (contextValue: unknown) =>
    spans.size === 0 ? undefined : spans.get((contextValue as GraphqlContext).requestId);
  const endSpan = (requestId: string, failure: string | null) => {
    const span = spans.get(requestId);
    if (span === undefined) return;
    spans.delete(requestId);
    if (failure !== null) span.fail(failure);
    span.end();
  };

  function watchConnection(ctx: ConnectContext, connection: Connection) {
    const socket = ctx.extra.socket;
    const timer = setInterval(() => {
      authenticate(connection.credentials, `ws:${connection.id}`).then(
        (auth) => {
          // 100102 (the database or the issuer away) says nothing about the credential.
          if (auth.kind === 'refused' && !auth.error.retryable)
            socket.close(CloseCode.Forbidden, 'Forbidden: the credential is no longer valid');
        },
        (error: unknown) => outages.report('websocket credential re-check failed', error),
      );
    }, limits.recheckMs);
    socket.once('close', () => {
      clearInterval(timer);
      for (const key of [...active.keys()]) if (key.startsWith(`${connection.id}:`)) release(key);
      for (const key of [...operationAuth.keys()])
        if (key.startsWith(`${connection.id}:`)) operationAuth.delete(key);
      // An operation the close cut short may never reach onComplete or onError: its span ends here.
      for (const key of [...spans.keys()])
        if (key.startsWith(`ws:${connection.id}:`)) endSpan(key, 'closed');
    });
  }

  return {
    /** Handles an HTTP upgrade for `/graphql`; anything else is refused. */
    handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
      const { pathname } = new URL(request.url ?? '/', 'http://localhost');
      if (pathname !== '/graphql') {
        socket.destroy();
        return;
      }
      wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
    },
    async close(): Promise<void> {
      for (const client of wss.clients) client.close(goingAway, 'Going away');
      await server.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
