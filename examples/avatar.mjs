// A talking-avatar video from a portrait and a script:
//   node examples/avatar.mjs portrait.png "Welcome to the studio."
// The portrait is uploaded (createUpload, then PUT of its bytes), made an avatar, and spoken for.
import { readFile } from 'node:fs/promises';
import { generate, graphql } from './client.mjs';

const [portraitFile, script = 'Hello there. Welcome to the studio.'] = process.argv.slice(2);
if (!portraitFile) {
  console.error('Usage: node examples/avatar.mjs PORTRAIT.png [SCRIPT]');
  process.exit(2);
}
const bytes = await readFile(portraitFile);
const { createUpload } = await graphql(
  'mutation ($input: CreateUploadInput!) { createUpload(input: $input) { mediaId uploadUrl } }',
  {
    input: { kind: 'image', mimeType: 'image/png', bytes: bytes.length, filename: 'portrait.png' },
  },
);
const put = await fetch(createUpload.uploadUrl, {
  method: 'PUT',
  headers: { 'content-type': 'image/png' },
  body: bytes,
});
if (!put.ok) throw new Error(`upload: HTTP ${put.status} ${await put.text()}`);
const { createAvatar } = await graphql(
  'mutation ($input: CreateAvatarInput!) { createAvatar(input: $input) { avatarId } }',
  { input: { name: 'Example', portraitMediaId: createUpload.mediaId, voiceModelId: 'voc_en-us' } },
);
console.log(`avatar ${createAvatar.avatarId}`);
await generate('avatar', 'generateAvatarVideo', 'GenerateAvatarVideoInput', {
  modelId: process.env.MODEL_ID ?? 'mdl_atelier-avatar',
  avatarId: createAvatar.avatarId,
  script,
  resolution: '512p',
});
