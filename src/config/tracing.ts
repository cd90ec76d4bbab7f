import { z } from 'zod';
import { isHttpUrl, wholeNumber } from './values.ts';
import type { ShapeOf, Variable } from './variable.ts';

/**
 * OpenTelemetry traces, configured by the standard `OTEL_*` variables with the meanings the
 * OpenTelemetry specification gives them ("Environment Variable Specification", and "OTLP
 * Exporter Configuration"). One difference, on purpose: tracing is off until an OTLP endpoint
 * is named, where the specification would send to `http://localhost:4318` by default — a
 * self-hosted install says nothing to a collector it was not told about.
 */
export interface TracingConfig {
  /** Where spans are POSTed: OTLP/HTTP with JSON bodies. */
  readonly url: string;
  /**
   * Headers of each export (a collector's credential, often). A Map, so that serialising the
   * configuration shows none of them.
   */
  readonly headers: ReadonlyMap<string, string>;
  /** How long one export may take. */
  readonly timeoutMs: number;
  /** `service.name`, and the other resource attributes of every span. */
  readonly serviceName: string;
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly sampler: TracesSampler;
  /** The batch span processor: how long spans wait, how many wait at most, how many go at once. */
  readonly batch: {
    readonly delayMs: number;
    readonly exportTimeoutMs: number;
    readonly maxQueueSize: number;
    readonly maxBatchSize: number;
  };
}

export type TracesSampler = {
  readonly name:
    | 'always_on'
    | 'always_off'
    | 'traceidratio'
    | 'parentbased_always_on'
    | 'parentbased_always_off'
    | 'parentbased_traceidratio';
  /** The ratio of the `traceidratio` samplers, from 0 to 1. */
  readonly ratio: number;
};

const spec = 'https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/';

/** `key=value` pairs, comma-separated, values percent-encoded (the spec's W3C Baggage form). */
const keyValueList = z.string().transform((text, ctx) => {
  const pairs: Record<string, string> = {};
  for (const item of text.split(',')) {
    if (item.trim() === '') continue;
    const at = item.indexOf('=');
    const key = at === -1 ? '' : item.slice(0, at).trim();
    if (key === '') {
      ctx.addIssue({ code: 'custom', message: 'expected comma-separated key=value pairs' });
      return z.NEVER;
    }
    try {
      pairs[key] = decodeURIComponent(item.slice(at + 1).trim());
    } catch {
      ctx.addIssue({ code: 'custom', message: `the value of ${key} is not percent-encoded text` });
      return z.NEVER;
    }
  }
  return pairs;
});

const otlpUrl = z.string().refine(isHttpUrl, 'expected an http(s) URL');
const protocol = z.enum(['http/json'], {
  error: 'Atelier sends OTLP over HTTP with JSON bodies: expected http/json',
});
/** The specification's booleans: `true` in any letter case is true, anything else false. */
const specBoolean = z.string().transform((value) => value.trim().toLowerCase() === 'true');

/** The variables of tracing, in the configuration table's order (see variables.ts). */
export const tracingVariables = {
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    type: otlpUrl.optional(),
    shownDefault: '— (tracing off)',
    description: `turns tracing on: the OTLP/HTTP base URL spans go to (\`/v1/traces\` appended), e.g. \`http://collector:4318\`; all \`OTEL_*\` variables as the [specification](${spec}) says, those below being the ones read`,
  },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: {
    type: otlpUrl.optional(),
    description: 'turns tracing on too: the full URL spans go to, used as given (wins)',
  },
  OTEL_SDK_DISABLED: {
    type: specBoolean.optional(),
    shownDefault: '`false`',
    description: '`true` turns tracing off whatever else is set',
  },
  OTEL_TRACES_EXPORTER: {
    type: z.enum(['otlp', 'none'], { error: 'expected otlp or none' }).optional(),
    shownDefault: '`otlp`',
    description: '`none` turns tracing off',
  },
  OTEL_EXPORTER_OTLP_PROTOCOL: {
    type: protocol.optional(),
    shownDefault: '`http/json`',
    description: 'only `http/json` (OTLP/HTTP with JSON bodies, which collectors accept on 4318)',
  },
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: {
    type: protocol.optional(),
    shownDefault: '`http/json`',
    description: 'the same, for traces alone',
  },
  OTEL_EXPORTER_OTLP_HEADERS: {
    type: keyValueList.optional(),
    description:
      'headers of each export, `key=value` comma-separated, values percent-encoded (a collector credential)',
  },
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: {
    type: keyValueList.optional(),
    description: 'the same, for traces alone (added, and winning on the same name)',
  },
  OTEL_EXPORTER_OTLP_TIMEOUT: {
    type: wholeNumber(1, 600_000).optional(),
    shownDefault: '`10000` (10 s)',
    description: 'how long one export may take, in milliseconds',
  },
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: {
    type: wholeNumber(1, 600_000).optional(),
    description: 'the same, for traces alone (wins)',
  },
  OTEL_SERVICE_NAME: {
    type: z.string().min(1, 'must not be empty').optional(),
    shownDefault: '`atelier`',
    description:
      '`service.name` of every span (each process also says `atelier.process.role`: `server` or `worker`, and its `process.pid`)',
  },
  OTEL_RESOURCE_ATTRIBUTES: {
    type: keyValueList.optional(),
    description:
      'more resource attributes, `key=value` comma-separated (`OTEL_SERVICE_NAME` wins for `service.name`)',
  },
  OTEL_TRACES_SAMPLER: {
    type: z
      .enum([
        'always_on',
        'always_off',
        'traceidratio',
        'parentbased_always_on',
        'parentbased_always_off',
        'parentbased_traceidratio',
      ])
      .optional(),
    shownDefault: '`parentbased_always_on`',
    description:
      '`always_on` `always_off` `traceidratio` `parentbased_always_on` `parentbased_always_off` `parentbased_traceidratio`',
  },
  OTEL_TRACES_SAMPLER_ARG: {
    type: z
      .string()
      .regex(/^(0(\.\d+)?|1(\.0+)?)$/, 'expected a ratio from 0 to 1')
      .transform(Number)
      .optional(),
    shownDefault: '`1`',
    description: 'the ratio of the `traceidratio` samplers',
  },
  OTEL_BSP_SCHEDULE_DELAY: {
    type: wholeNumber(0, 600_000),
    default: '5000', // 5 seconds
    description: 'milliseconds between two exports of finished spans',
  },
  OTEL_BSP_EXPORT_TIMEOUT: {
    type: wholeNumber(1, 600_000),
    default: '30000', // 30 seconds
    description: 'milliseconds one batch export may take',
  },
  OTEL_BSP_MAX_QUEUE_SIZE: {
    type: wholeNumber(1, 1_000_000),
    default: '2048',
    description: 'finished spans kept waiting at most (more are dropped)',
  },
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: {
    type: wholeNumber(1, 1_000_000),
    default: '512',
    description: 'spans in one export at most',
  },
} satisfies Record<string, Variable>;

type TracingValues = z.infer<z.ZodObject<ShapeOf<typeof tracingVariables>>>;

/** What no single variable can say wrong. */
export function tracingProblems(values: TracingValues): string[] {
  return values.OTEL_BSP_MAX_EXPORT_BATCH_SIZE > values.OTEL_BSP_MAX_QUEUE_SIZE
    ? ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE: must not exceed OTEL_BSP_MAX_QUEUE_SIZE']
    : [];
}

/**
 * Tracing as configured, or null when it is off: no endpoint named, `OTEL_TRACES_EXPORTER=none`
 * or `OTEL_SDK_DISABLED=true`. Off, the SDK is not even loaded (observability/tracing.ts).
 */
export function tracingConfig(values: TracingValues): TracingConfig | null {
  const base = values.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url =
    values.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (url === undefined || values.OTEL_SDK_DISABLED === true) return null;
  if (values.OTEL_TRACES_EXPORTER === 'none') return null;
  const attributes = { ...values.OTEL_RESOURCE_ATTRIBUTES };
  const serviceName = values.OTEL_SERVICE_NAME ?? attributes['service.name'] ?? 'atelier';
  delete attributes['service.name'];
  return {
    url,
    headers: new Map(
      Object.entries({
        ...values.OTEL_EXPORTER_OTLP_HEADERS,
        ...values.OTEL_EXPORTER_OTLP_TRACES_HEADERS,
      }),
    ),
    timeoutMs:
      values.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? values.OTEL_EXPORTER_OTLP_TIMEOUT ?? 10_000,
    serviceName,
    resourceAttributes: attributes,
    sampler: {
      name: values.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on',
      ratio: values.OTEL_TRACES_SAMPLER_ARG ?? 1,
    },
    batch: {
      delayMs: values.OTEL_BSP_SCHEDULE_DELAY,
      exportTimeoutMs: values.OTEL_BSP_EXPORT_TIMEOUT,
      maxQueueSize: values.OTEL_BSP_MAX_QUEUE_SIZE,
      maxBatchSize: values.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
    },
  };
}
