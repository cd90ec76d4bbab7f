import assert from 'node:assert/strict';
import OpenAI, { APIError, type ClientOptions } from 'openai';

/**
 * The official SDK pointed at a test Atelier's `/v1`. No retries unless a test asks for them,
 * so one call is one request.
 */
export function openaiClient(url: string, apiKey: string, options: ClientOptions = {}): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${url}/v1`, maxRetries: 0, ...options });
}

/**
 * The SDK with its idempotency header switched on, as docs/openai-api.md shows: every POST gets an
 * `Idempotency-Key` (the `idempotencyKey` request option, or one the SDK makes up), and its
 * automatic retries resend the same one.
 */
export class AtelierOpenAI extends OpenAI {
  protected override idempotencyHeader = 'Idempotency-Key';
}

/** The error body's fields beyond OpenAI's four (Atelier's details: `allowed`, `contentId`…). */
export type ErrorFields = Record<string, unknown>;

/** The APIError `call` must fail with. */
export async function apiError(call: Promise<unknown>): Promise<APIError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof APIError, `expected an APIError, got ${String(error)}`);
    return error;
  }
  assert.fail('the call succeeded');
}

/** `error.error` of an APIError: the body's `error` object, all of it. */
export function errorFields(error: APIError): ErrorFields {
  return (error.error ?? {}) as ErrorFields;
}
