// Atelier through the official OpenAI SDK (npm install openai): node examples/openai.mjs
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import OpenAI from 'openai';

const baseURL = `${(process.env.ATELIER_URL ?? 'http://localhost:8080').replace(/\/$/, '')}/v1`;
const atelier = new OpenAI({ baseURL, apiKey: process.env.ATELIER_API_KEY });

const image = await atelier.images.generate(
  {
    model: 'mdl_atelier-sketch',
    prompt: 'a lighthouse at dawn',
    size: '1024x576',
    response_format: 'b64_json',
  },
  { headers: { 'Idempotency-Key': randomUUID() } }, // one key per generation, reused by retries
);
await writeFile('lighthouse.png', Buffer.from(image.data[0].b64_json, 'base64'));

const speech = await atelier.audio.speech.create(
  {
    model: 'mdl_atelier-voice',
    voice: 'voc_en-gb',
    input: 'Hello from Atelier.',
    response_format: 'opus',
  },
  { headers: { 'Idempotency-Key': randomUUID() } },
);
await writeFile('hello.ogg', Buffer.from(await speech.arrayBuffer())); // Ogg Opus

// Or let the SDK make the key: it makes one per request, kept across its own retries, and sends
// it once its (protected) header name is set.
class Atelier extends OpenAI {
  idempotencyHeader = 'Idempotency-Key';
}
const keyed = new Atelier({ baseURL, apiKey: process.env.ATELIER_API_KEY });
const again = await keyed.images.generate({
  model: 'mdl_atelier-sketch',
  prompt: 'a harbour at dusk',
  response_format: 'b64_json',
});
await writeFile('harbour.png', Buffer.from(again.data[0].b64_json, 'base64'));
console.log('wrote lighthouse.png, hello.ogg and harbour.png');
