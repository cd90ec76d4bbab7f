// Every voice of the catalogue, for the forms that pick one: the Generate form's speech voice
// (generate.js) and an avatar's default voice (avatars.js).

import { api } from './client.js';

let voices;

/** Every voice, page after page (there are hundreds), fetched once per page load. */
export async function allVoices() {
  if (voices !== undefined) return voices;
  const found = [];
  let after = null;
  for (;;) {
    const { listVoiceModels: page } = await api(
      `query ($after: String) { listVoiceModels(first: 100, after: $after) {
        nodes { voiceModelId name language } pageInfo { hasNextPage endCursor } } }`,
      { after },
    );
    found.push(...page.nodes);
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  voices = found;
  return voices;
}
