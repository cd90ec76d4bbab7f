// An image: node examples/image.mjs "a lighthouse at dawn"
import { generate } from './client.mjs';

await generate('image', 'generateImage', 'GenerateImageInput', {
  modelId: process.env.MODEL_ID ?? 'mdl_atelier-sketch',
  prompt: process.argv[2] ?? 'a lighthouse at dawn',
  width: 1024,
  height: 1024,
  format: 'png',
});
