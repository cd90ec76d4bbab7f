// Speech from a text file (long texts are fine: they travel as a GraphQL variable):
//   node examples/speech.mjs notes.txt [voc_en-gb]
import { readFile } from 'node:fs/promises';
import { generate } from './client.mjs';

const text = process.argv[2]
  ? await readFile(process.argv[2], 'utf8')
  : 'Hello from Atelier. This speech was made on your own server.';
await generate('speech', 'generateSpeech', 'GenerateSpeechInput', {
  modelId: process.env.MODEL_ID ?? 'mdl_atelier-voice',
  voiceModelId: process.argv[3] ?? 'voc_en-gb',
  text,
  format: 'mp3',
});
