import { setFlagsFromString } from 'node:v8';

/**
 * Keeps WebAssembly on V8's baseline compiler (Liftoff) for this process. With tier-up, V8
 * recompiles the hot functions of PGlite's Postgres (and eSpeak's) with its optimising
 * compiler: about 500 MiB of peak memory at start and up to 300 MiB left behind, for queries
 * that here take well under a millisecond either way (a CPU-heavy query runs about 1.6× slower).
 * Both flags are needed; neither is allowed in NODE_OPTIONS. Call it before any WebAssembly is
 * compiled (PGlite compiles when a database is opened). Measured by bench/start (docs/performance.md,
 * "Start and footprint"); the benchmarks' Atelier servers call it too, to run as `serve` does.
 */
export function keepWebAssemblyOnBaseline(): void {
  setFlagsFromString('--no-wasm-tier-up');
  setFlagsFromString('--no-wasm-dynamic-tiering');
}
