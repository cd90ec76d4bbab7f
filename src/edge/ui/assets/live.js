// Live updates for the console: one graphql-ws connection per page, signed in with the ID
// token (assets/graphql-ws.js sets globalThis.graphqlWs), and following one task to its end.

import { ApiError, currentToken } from './client.js';

let socket;
/** One graphql-ws connection for the page, opened on first use, signed in with the ID token. */
export function liveClient() {
  socket ??= globalThis.graphqlWs.createClient({
    url: `${window.location.origin.replace(/^http/, 'ws')}/graphql`,
    connectionParams: () => ({ idpToken: currentToken() }),
  });
  return socket;
}

/** "Queued, 3 ahead, about 40 s": where a queued task stands, as far as the server can tell. */
export function queuedText(task) {
  const parts = ['Queued'];
  if (task.queuePosition != null) parts.push(`${task.queuePosition} ahead`);
  if (task.estimatedStartAt != null) {
    const seconds = Math.round((Date.parse(task.estimatedStartAt) - Date.now()) / 1000);
    parts.push(
      seconds < 1
        ? 'starting now'
        : seconds < 60
          ? `about ${seconds} s`
          : `about ${Math.round(seconds / 60)} min`,
    );
  }
  return `${parts.join(', ')}…`;
}

/** Calls `onTask` with the task's current state, then each change, until it is finished. */
export function follow(taskId, onTask) {
  return new Promise((resolve, reject) => {
    const unsubscribe = liveClient().subscribe(
      {
        query: `subscription ($taskId: ID!) { taskUpdated(taskId: $taskId) {
          taskId status progress finishCode finishMessage queuePosition estimatedStartAt } }`,
        variables: { taskId },
      },
      {
        next: ({ data, errors }) => {
          if (errors?.length) {
            reject(new ApiError(errors[0].message, errors[0].extensions?.code, {}));
            return;
          }
          onTask(data.taskUpdated);
          if (data.taskUpdated.status === 'finished') {
            unsubscribe();
            resolve(data.taskUpdated);
          }
        },
        error: (error) =>
          reject(error instanceof Error ? error : new Error('The live connection failed.')),
        complete: () => resolve(undefined),
      },
    );
  });
}

/** Closes the page's live connection, if one was opened (on signing out). */
export function closeLive() {
  socket?.dispose();
  socket = undefined;
}
