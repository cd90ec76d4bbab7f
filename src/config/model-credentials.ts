import { poolOf } from '../domain/backends.ts';
import type { ModelDefinition } from '../domain/model.ts';
import { isHttpOrigin } from './values.ts';

/** What models' options say about reaching their model servers, checked at start. */
export interface ModelCredentials {
  /** Values of the variables models name in `apiKeyEnv`, by name. Never logged or stored. */
  readonly secrets: ReadonlyMap<string, string>;
  readonly problems: readonly string[];
}

const variableName = /^[A-Za-z_][A-Za-z0-9_]*$/;

function hasUserInfo(url: string): boolean {
  const { username, password } = new URL(url);
  return username !== '' || password !== '';
}

/**
 * Reads the credentials models name by environment variable (`engineOptions.apiKeyEnv`, of
 * every backend of a pool) and checks their base URLs: a variable that is not set, or a `baseUrl` that is not an http(s)
 * URL, is a problem listed with every other one at start. This is the one place secrets are
 * read from the environment; core hands them to the engines.
 */
export function modelCredentials(
  models: readonly ModelDefinition[],
  env: Readonly<Record<string, string | undefined>>,
): ModelCredentials {
  const secrets = new Map<string, string>();
  const problems: string[] = [];
  const backends = models.flatMap((model, index) =>
    poolOf(model).map((backend, b) => ({
      where:
        model.backends === undefined
          ? `MODELS[${index}] (${model.modelId})`
          : `MODELS[${index}].backends[${b}] (${backend.id})`,
      options: backend.engineOptions,
    })),
  );
  for (const { where, options } of backends) {
    const { apiKeyEnv, baseUrl } = options;
    if (baseUrl !== undefined && (typeof baseUrl !== 'string' || !isHttpOrigin(baseUrl))) {
      problems.push(`${where}: engineOptions.baseUrl must be an http(s) URL without a query`);
    } else if (typeof baseUrl === 'string' && hasUserInfo(baseUrl)) {
      // It would be stored in the catalogue and shown in backend labels: name it instead.
      problems.push(
        `${where}: engineOptions.baseUrl must not hold a user or password; put the key in a variable named by apiKeyEnv`,
      );
    }
    if (apiKeyEnv === undefined) continue;
    if (typeof apiKeyEnv !== 'string' || !variableName.test(apiKeyEnv)) {
      problems.push(`${where}: engineOptions.apiKeyEnv must be an environment variable name`);
      continue;
    }
    const value = env[apiKeyEnv];
    if (value === undefined || value === '') {
      problems.push(
        `${where}: engineOptions.apiKeyEnv names ${apiKeyEnv}, which is not set (the model server's API key)`,
      );
      continue;
    }
    secrets.set(apiKeyEnv, value);
  }
  return { secrets, problems };
}
