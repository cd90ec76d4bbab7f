// One task's live updates: node examples/live-updates.mjs tsk_…
// Node sends the API key in the WebSocket handshake (Authorization: Bearer); a browser, which
// cannot set handshake headers, sends an ID token instead: connectionParams: { idpToken }.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const url = (process.env.ATELIER_URL ?? 'http://localhost:8080').replace(/\/$/, '');
const headers = { authorization: `Bearer ${process.env.ATELIER_API_KEY}` };
const client = createClient({
  url: `${url.replace(/^http/, 'ws')}/graphql`,
  webSocketImpl: class extends WebSocket {
    constructor(address, protocols) {
      super(address, protocols, { headers });
    }
  },
});

try {
  // The current state first, then every change; the server ends it once the task is finished.
  const updates = client.iterate({
    query: `subscription ($taskId: ID!) {
      taskUpdated(taskId: $taskId) { status progress finishCode cursor } }`,
    variables: { taskId: process.argv[2] },
  });
  for await (const { data, errors } of updates) {
    if (errors?.length) throw new Error(errors[0].message);
    const task = data.taskUpdated;
    // After a disconnect, subscribe again with `after: task.cursor` to get what came since.
    console.log(`${task.status} ${Math.round(task.progress * 100)}%`);
  }
} finally {
  await client.dispose();
}
