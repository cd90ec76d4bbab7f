import { type Config, ConfigError } from './config/config.ts';
import { type PoolBackend, poolOf } from './domain/backends.ts';
import { builtinModels } from './domain/builtin-catalogue.ts';
import { configuredVoices, duplicateVoiceProblems } from './domain/configured-voices.ts';
import type { ModelDefinition } from './domain/model.ts';
import type { Engine } from './engines/engine.ts';
import { bindingProblems } from './engines/registry.ts';
import { backendName } from './engines/remote/remote-deps.ts';

// The catalogue: the built-in models with MODELS added or replacing them, bound to the engines
// that run them, and what of it is recorded in the database (the pools' backends). Checked whole
// at start and by every reload (services/models-reload.service.ts), every problem listed.

/**
 * Built-in models, with configured ones added or replacing them by modelId, each bound to an
 * engine that makes its kind; otherwise the service refuses to start, listing every problem.
 */
export function catalogueModels(
  config: Pick<Config, 'models'>,
  engines: ReadonlyMap<string, Pick<Engine, 'kinds'>>,
): ModelDefinition[] {
  const { models, problems } = checkCatalogue(config.models, engines);
  if (problems.length > 0) {
    throw new ConfigError(problems.map((problem) => `MODELS: ${problem}`));
  }
  return models;
}

/** The catalogue `configured` makes with the built-ins, and every problem binding it. */
export function checkCatalogue(
  configured: readonly ModelDefinition[],
  engines: ReadonlyMap<string, Pick<Engine, 'kinds'>>,
): { models: ModelDefinition[]; problems: string[] } {
  const byId = new Map(builtinModels.map((m) => [m.modelId, m]));
  for (const model of configured) byId.set(model.modelId, model);
  const models = [...byId.values()];
  return {
    models,
    problems: [
      ...bindingProblems(models, engines),
      ...duplicateVoiceProblems(configuredVoices(models)),
    ],
  };
}

/**
 * The backends recorded in the database: every backend of a model that lists a pool, and the
 * one engine of a model whose engine talks to a server (it has health). A model on a built-in
 * engine alone holds nothing, and its tasks are claimed as before pools.
 */
export function recordedBackends(
  models: readonly ModelDefinition[],
  engines: ReadonlyMap<string, Pick<Engine, 'probe'>>,
): PoolBackend[] {
  return models.flatMap((m) =>
    m.backends !== undefined || engines.get(m.engine)?.probe !== undefined ? poolOf(m) : [],
  );
}

/**
 * The model servers of backends that name one (`engineOptions.baseUrl`), as `/readyz` lists
 * them.
 */
export function configuredBackends(models: readonly ModelDefinition[]): string[] {
  const urls = models
    .flatMap(poolOf)
    .flatMap((b) =>
      typeof b.engineOptions.baseUrl === 'string'
        ? [backendName(b.engine, b.engineOptions.baseUrl)]
        : [],
    );
  return [...new Set(urls)];
}
