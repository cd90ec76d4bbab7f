import { randomUUID } from 'node:crypto';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { TracesSampler, TracingConfig } from '../config/tracing.ts';
import { tracingStarted } from './tracing.ts';

// Loaded only when tracing is configured (core.ts imports this file dynamically): with tracing
// off, none of the SDK is in the process.

/** The SDK as started: `shutdown` exports what is still queued, then stops. */
export interface TracingSdk {
  shutdown(): Promise<void>;
}

/**
 * Registers the OpenTelemetry SDK for this process: AsyncLocalStorage context, the W3C trace
 * context propagator (no baggage: it could carry what a provider should not see), and a batch
 * span processor exporting OTLP/HTTP JSON to the configured endpoint.
 */
export function startTracingSdk(config: TracingConfig, role: 'server' | 'worker'): TracingSdk {
  const exporter = new OTLPTraceExporter({
    url: config.url,
    headers: Object.fromEntries(config.headers),
    timeoutMillis: config.timeoutMs,
  });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      ...config.resourceAttributes,
      'service.name': config.serviceName,
      'service.instance.id': randomUUID(),
      'process.pid': process.pid,
      'atelier.process.role': role,
    }),
    sampler: samplerOf(config.sampler),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        scheduledDelayMillis: config.batch.delayMs,
        exportTimeoutMillis: config.batch.exportTimeoutMs,
        maxQueueSize: config.batch.maxQueueSize,
        maxExportBatchSize: config.batch.maxBatchSize,
      }),
    ],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  tracingStarted();
  return {
    async shutdown() {
      await provider.shutdown();
    },
  };
}

function samplerOf({ name, ratio }: TracesSampler): Sampler {
  const root = name.endsWith('always_on')
    ? new AlwaysOnSampler()
    : name.endsWith('always_off')
      ? new AlwaysOffSampler()
      : new TraceIdRatioBasedSampler(ratio);
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}
