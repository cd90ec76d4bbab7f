/** `MODELS` for benchmarks: one image model bound to the no-op engine, 1 credit a request. */
export const noopModels = JSON.stringify([
  {
    modelId: 'mdl_bench-noop',
    name: 'no-op',
    kind: 'image',
    engine: 'noop',
    capabilities: {
      sizes: [{ width: 1, height: 1, aspectRatio: '1:1', maxCount: 1 }],
      formats: ['png'],
    },
    pricing: { unit: 'request', credits: 1, category: null },
  },
]);
