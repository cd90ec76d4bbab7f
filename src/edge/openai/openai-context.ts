import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../domain/actor.ts';
import type { Services } from '../services.ts';
import type { ParamNames } from './openai-error.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller of a `/v1` route, set before its handler runs. */
    openaiActor: Actor | null;
  }
}

/** What the `/v1` routes share. */
export interface OpenAiContext {
  readonly services: Services;
  /** How long a generation request waits for its result (`OPENAI_WAIT_SECONDS`). */
  readonly waitMs: number;
  /** Answers an error in OpenAI's shape, naming fields as the request did. */
  readonly fail: (
    request: FastifyRequest,
    reply: FastifyReply,
    error: unknown,
    names?: ParamNames,
  ) => FastifyReply;
}

/** The caller the `/v1` preHandler authenticated. */
export function actorOf(request: FastifyRequest): Actor {
  if (request.openaiActor === null) throw new Error('a /v1 route ran without its actor');
  return request.openaiActor;
}

/** The `Idempotency-Key` header, if sent (the first one, if repeated). */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const value = request.headers['idempotency-key'];
  return Array.isArray(value) ? value[0] : value;
}
