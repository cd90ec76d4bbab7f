// A video: node examples/video.mjs "waves at night"
import { generate } from './client.mjs';

await generate('video', 'generateVideo', 'GenerateVideoInput', {
  modelId: process.env.MODEL_ID ?? 'mdl_atelier-motion',
  prompt: process.argv[2] ?? 'waves at night',
  resolution: '480p',
  aspectRatio: '16:9',
  durationSeconds: 3,
});
