// What the examples share: the server address and API key from the environment, GraphQL over
// HTTP, a task followed over WebSocket (graphql-transport-ws) until it finishes, and the
// download of its media through their expiring URLs. Plain JavaScript on Node 22.18+, using the
// repository's own dependencies (graphql-ws, ws).
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

export const url = (process.env.ATELIER_URL ?? 'http://localhost:8080').replace(/\/$/, '');
const apiKey = process.env.ATELIER_API_KEY;
if (!apiKey) {
  console.error('Set ATELIER_API_KEY to an API key (the first start printed one).');
  process.exit(2);
}

/** One GraphQL request; its first error, if any, is thrown with its code. */
export async function graphql(query, variables = {}) {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    // Every value, long texts included, travels in `variables`: never spliced into the query.
    body: JSON.stringify({ query, variables }),
  });
  const body = await response.json();
  if (body.errors?.length) {
    const [error] = body.errors;
    throw new Error(`${error.extensions?.code ?? 'error'}: ${error.message}`);
  }
  return body.data;
}

/**
 * Prices `input`, submits it with a new idempotency key (a retry with the same key is never
 * charged twice), follows the task live until it finishes, and downloads its media into the
 * current directory. Resolves with the paths written.
 */
export async function generate(kind, mutation, inputType, input) {
  const { estimateCost } = await graphql(
    'query ($input: CostEstimateInput!) { estimateCost(input: $input) { credits category affordable } }',
    { input: { kind, input } },
  );
  console.log(`costs ${estimateCost.credits} credits (affordable: ${estimateCost.affordable})`);
  const idempotencyKey = randomUUID();
  const submitted = (
    await graphql(
      `mutation ($input: ${inputType}!) { ${mutation}(input: $input) { contentId taskId } }`,
      { input: { ...input, idempotencyKey } },
    )
  )[mutation];
  console.log(`submitted: content ${submitted.contentId}, task ${submitted.taskId}`);
  const task = await follow(submitted.taskId);
  if (task.finishCode !== 0) {
    throw new Error(`finished with code ${task.finishCode}: ${task.finishMessage}`);
  }
  return download(submitted.contentId);
}

/** The task's updates over WebSocket, printed, until it finishes. */
function follow(taskId) {
  const client = createClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    // The API key goes in the handshake's Authorization header, as on HTTP.
    webSocketImpl: class extends WebSocket {
      constructor(address, protocols) {
        super(address, protocols, { headers: { authorization: `Bearer ${apiKey}` } });
      }
    },
  });
  return new Promise((resolve, reject) => {
    let last;
    client.subscribe(
      {
        query: `subscription ($taskId: ID!) { taskUpdated(taskId: $taskId) {
          status progress finishCode finishMessage } }`,
        variables: { taskId },
      },
      {
        next: ({ data, errors }) => {
          if (errors?.length) return reject(new Error(errors[0].message));
          last = data.taskUpdated;
          console.log(`${last.status} ${Math.round((last.progress ?? 0) * 100)}%`);
        },
        error: reject,
        complete: () => {
          void client.dispose();
          if (last?.status === 'finished') resolve(last);
          else reject(new Error('the update stream ended before the task finished'));
        },
      },
    );
  });
}

/** Writes the content's media (fresh download URLs at every read) next to the script's caller. */
async function download(contentId) {
  const { getContent } = await graphql(
    `query ($id: ID!) { getContent(contentId: $id) {
      media { mediaId mimeType download { url expiresAt } } } }`,
    { id: contentId },
  );
  const written = [];
  for (const [i, media] of getContent.media.entries()) {
    const response = await fetch(media.download.url);
    if (!response.ok) throw new Error(`download of ${media.mediaId}: HTTP ${response.status}`);
    const extension = media.mimeType.split('/')[1].replace('mpeg', 'mp3');
    const file = `${contentId}-${i + 1}.${extension}`;
    await writeFile(file, Buffer.from(await response.arrayBuffer()));
    console.log(`downloaded ${file} (${media.mimeType})`);
    written.push(file);
  }
  return written;
}
