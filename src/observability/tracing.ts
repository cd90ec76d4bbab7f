import {
  type Attributes,
  type Context,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

/**
 * The tracing port: spans, and the W3C trace context carried across processes (with the task)
 * and to other servers (`traceparent`, `tracestate`). Only `@opentelemetry/api` here, whose
 * no-op tracer stands in until tracing-sdk.ts registers the SDK; when tracing is off that never
 * happens, and each helper below returns after one boolean test.
 *
 * Attributes are ids (task, content, model, backend, delivery) and codes; never a prompt, a
 * secret or anything personal.
 */

let on = false;

/** Called once the SDK is registered (tracing-sdk.ts): from here on, spans are recorded. */
export function tracingStarted(): void {
  on = true;
}

/** Whether spans are recorded in this process. */
export function tracingOn(): boolean {
  return on;
}

const tracer = () => trace.getTracer('atelier');

/** The W3C trace context as headers: `traceparent`, and `tracestate` when there is one. */
export type TraceCarrier = Record<string, string>;

export interface SpanOptions {
  readonly kind?: 'internal' | 'server' | 'client';
  readonly attributes?: Attributes;
  /** The parent; the active context when absent. */
  readonly parent?: Context;
  readonly startTime?: Date;
}

const kinds = { internal: SpanKind.INTERNAL, server: SpanKind.SERVER, client: SpanKind.CLIENT };

/** The part of a span the code sees: attributes, an outcome, a name once it is known. */
export interface TraceSpan {
  setAttributes(attributes: Attributes): void;
  /** Marks the span failed with a code (an AppError code, an HTTP status), never a message. */
  fail(code: string): void;
  rename(name: string): void;
}

const noSpan: TraceSpan = { setAttributes() {}, fail() {}, rename() {} };

function wrap(span: Span): TraceSpan {
  return {
    setAttributes: (attributes) => span.setAttributes(attributes),
    fail: (code) => {
      span.setAttribute('error.type', code);
      span.setStatus({ code: SpanStatusCode.ERROR });
    },
    rename: (name) => span.updateName(name),
  };
}

/** What a thrown error says in a span: its stable code if it has one, else its class. */
function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' || typeof code === 'number') return String(code);
  return error instanceof Error ? error.name : 'Error';
}

/**
 * Runs `fn` in a span that is the active one meanwhile, and ends it when `fn` settles; a
 * throw marks it failed with the error's code.
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: TraceSpan) => Promise<T>,
): Promise<T> {
  if (!on) return fn(noSpan);
  const span = tracer().startSpan(
    name,
    {
      kind: kinds[options.kind ?? 'internal'],
      ...(options.attributes === undefined ? {} : { attributes: options.attributes }),
      ...(options.startTime === undefined ? {} : { startTime: options.startTime }),
    },
    options.parent ?? context.active(),
  );
  const wrapped = wrap(span);
  try {
    return await context.with(trace.setSpan(options.parent ?? context.active(), span), () =>
      fn(wrapped),
    );
  } catch (error) {
    wrapped.fail(errorType(error));
    throw error;
  } finally {
    span.end();
  }
}

/** A span of something already over (a wait measured by two timestamps), recorded at once. */
export function recordSpan(
  name: string,
  o: { parent: Context; start: Date; end: Date; attributes?: Attributes },
): void {
  if (!on) return;
  tracer()
    .startSpan(
      name,
      { startTime: o.start, ...(o.attributes ? { attributes: o.attributes } : {}) },
      o.parent,
    )
    .end(o.end);
}

/** A span started now and ended later by whoever holds it (a WebSocket operation, a request). */
export interface OpenSpan extends TraceSpan {
  /** The context with this span active, for what runs inside it. */
  readonly context: Context;
  end(): void;
}

export function openSpan(name: string, options: SpanOptions): OpenSpan | null {
  if (!on) return null;
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(
    name,
    {
      kind: kinds[options.kind ?? 'internal'],
      ...(options.attributes === undefined ? {} : { attributes: options.attributes }),
    },
    parent,
  );
  return { ...wrap(span), context: trace.setSpan(parent, span), end: () => span.end() };
}

/** Runs `fn` with `ctx` active (null: as it is). */
export function withContext<T>(ctx: Context | null, fn: () => T): T {
  return ctx === null ? fn() : context.with(ctx, fn);
}

/** Sets attributes on the active span, if one is recording. */
export function annotate(attributes: Attributes): void {
  if (on) trace.getActiveSpan()?.setAttributes(attributes);
}

/** The active trace context as W3C headers, to store with a task; null when there is none. */
export function currentCarrier(): TraceCarrier | null {
  if (!on) return null;
  const carrier: TraceCarrier = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent === undefined ? null : carrier;
}

/** The context a carrier (incoming headers, a task's stored context) names; the root if none. */
export function contextFrom(
  carrier: Readonly<Record<string, string | string[] | undefined>> | null,
): Context {
  if (!on || carrier === null) return context.active();
  return propagation.extract(context.active(), carrier);
}

/** An HTTP call to another server, in a client span whose context its headers carry. */
export interface OutboundCall {
  /** The span's name (`POST`, or what the call is). */
  readonly name: string;
  readonly method: string;
  readonly url: string;
  readonly attributes?: Attributes;
}

/**
 * Sends one outbound HTTP request in a client span (child of the active one); `send` gets the
 * `traceparent`/`tracestate` headers to add, and the span ends with the answer's status, or
 * the error. Off, `send` gets no headers.
 */
export async function tracedCall<R extends { status: number } | undefined>(
  call: OutboundCall,
  send: (headers: TraceCarrier) => Promise<R>,
): Promise<R> {
  if (!on) return send({});
  const target = new URL(call.url);
  const attributes: Attributes = {
    'http.request.method': call.method,
    'server.address': target.hostname,
    'server.port': Number(target.port || (target.protocol === 'https:' ? 443 : 80)),
    'url.scheme': target.protocol.slice(0, -1),
    ...call.attributes,
  };
  return inSpan(call.name, { kind: 'client', attributes }, async (span) => {
    const headers: TraceCarrier = {};
    propagation.inject(context.active(), headers);
    const answer = await send(headers);
    if (answer !== undefined) {
      span.setAttributes({ 'http.response.status_code': answer.status });
      if (answer.status >= 400) span.fail(String(answer.status));
    }
    return answer;
  });
}
