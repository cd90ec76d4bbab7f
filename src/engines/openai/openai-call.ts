import type { EngineResult } from '../engine.ts';
import { ProviderUnreachableError } from '../remote/provider-call.ts';
import { engineFailure, redact } from '../remote/provider-failure.ts';
import type { RemoteDeps } from '../remote/remote-deps.ts';
import { RemoteOutputError } from '../remote/remote-deps.ts';
import { type OpenAiOptions, secretsOf, serverLabel } from './openai-options.ts';
import { type Refusal, refusalFailure } from './post-until-finished.ts';

/**
 * What both `openai-*` engines do around their one call: finish messages name the engine and
 * model (the base URL and the provider's words go to the log's `detail`, secrets redacted),
 * and the failures every call can meet become finish codes.
 */
export function openaiCall(deps: RemoteDeps, engine: string, o: OpenAiOptions, output: string) {
  const secrets = secretsOf(deps, o);
  const server = serverLabel(engine, o);
  const logged = (detail: string) => ({ detail: `${o.baseUrl}: ${redact(detail, secrets)}` });
  return {
    /** A provider's refusal or error answer. */
    refused(answer: Refusal): EngineResult {
      return {
        ...refusalFailure(server, answer, secrets),
        ...logged(`HTTP ${answer.error.status}`),
      };
    },
    /** An unusable output or no answer at all, as a finish; anything else is thrown again. */
    failed(error: unknown): EngineResult {
      if (error instanceof RemoteOutputError) {
        return {
          ...engineFailure(`${server} returned ${output}: ${error.message}.`, secrets),
          ...logged(error.message),
        };
      }
      if (error instanceof ProviderUnreachableError) {
        return {
          ...engineFailure(`No answer from ${server} after ${error.attempts} attempt(s).`, []),
          detail: redact(error.detail, secrets),
        };
      }
      throw error;
    },
  };
}
