import type { EngineResult } from '../engine.ts';
import { ProviderUnreachableError } from '../remote/provider-call.ts';
import { remoteFailure } from '../remote/provider-failure.ts';
import type { RemoteDeps } from '../remote/remote-deps.ts';
import { RemoteOutputError } from '../remote/remote-deps.ts';
import { type OpenAiOptions, secretsOf, serverLabel } from './openai-options.ts';
import { type Refusal, refusalFailure } from './post-until-finished.ts';

/**
 * What both `openai-*` engines do around their one call: the failures every call can meet
 * become finish codes, the account told their class, the log (`detail`) the server's words
 * with its base URL, secrets redacted.
 */
export function openaiCall(deps: RemoteDeps, engine: string, o: OpenAiOptions, output: string) {
  const secrets = secretsOf(deps, o);
  const server = `${serverLabel(engine, o)} at ${o.baseUrl}`;
  return {
    /** A provider's refusal or error answer. */
    refused(answer: Refusal): EngineResult {
      return refusalFailure(server, answer, secrets);
    },
    /** An unusable output or no answer at all, as a finish; anything else is thrown again. */
    failed(error: unknown): EngineResult {
      if (error instanceof RemoteOutputError) {
        return remoteFailure('unusable', `${server} returned ${output}: ${error.message}`, secrets);
      }
      if (error instanceof ProviderUnreachableError) {
        return remoteFailure(
          'unreachable',
          `No answer from ${server} after ${error.attempts} attempt(s): ${error.detail}`,
          secrets,
        );
      }
      throw error;
    },
  };
}
