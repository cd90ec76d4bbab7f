// Live updates for the console: one graphql-ws connection per page, signed in with the ID
// token (assets/graphql-ws.js sets globalThis.graphqlWs), and following one task to its end.
// A dropped connection is opened again (with a growing pause) and each followed task is
// subscribed again after the last update it had (`after`, docs/live-updates.md), so nothing
// it did meanwhile is missed and nothing comes twice.

import { ApiError, currentToken } from './client.js';

/** graphql-ws's close codes after which trying again cannot help (4403: the sign-in ended). */
const hopeless = new Set([4400, 4401, 4403, 4409, 4429]);

/** Tries while the page is open: the pause doubles from about 1 s up to 30 s. */
const retryAttempts = 50;
function retryWait(retries) {
  const seconds = Math.min(30, 2 ** retries);
  return new Promise((resolve) => setTimeout(resolve, seconds * (500 + Math.random() * 500)));
}

/** Who wants to hear that the connection went down or came back: `(up: boolean) => void`. */
const watchers = new Set();

let socket;
/** One graphql-ws connection for the page, opened on first use, signed in with the ID token. */
export function liveClient() {
  socket ??= globalThis.graphqlWs.createClient({
    url: `${window.location.origin.replace(/^http/, 'ws')}/graphql`,
    // Read at every connection: a reconnection signs in with the token the tab has now.
    connectionParams: () => ({ idpToken: currentToken() }),
    retryAttempts,
    retryWait,
    shouldRetry: (event) =>
      typeof event?.code === 'number' && !hopeless.has(event.code) && currentToken() !== null,
    on: {
      closed: () => {
        for (const watcher of watchers) watcher(false);
      },
      connected: () => {
        for (const watcher of watchers) watcher(true);
      },
    },
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

/**
 * Calls `onTask` with the task's current state, then each change, until it is finished;
 * `onConnection(up)` when the live connection drops (false) and is back (true). Resolves with
 * the finished task.
 */
export function follow(taskId, onTask, onConnection = () => {}) {
  // graphql-ws sends a subscription's own payload again when it reconnects (its subscribe
  // loop keeps the object and serialises it at each send): keeping `after` at the cursor of
  // the last update makes that resubscription resume there.
  const payload = {
    query: `subscription ($taskId: ID!, $after: String) { taskUpdated(taskId: $taskId, after: $after) {
      taskId status progress finishCode finishMessage queuePosition estimatedStartAt cursor } }`,
    variables: { taskId, after: null },
  };
  return new Promise((resolve, reject) => {
    let last;
    let down = false;
    const watcher = (up) => {
      if (up === !down) return;
      down = !up;
      onConnection(up);
    };
    watchers.add(watcher);
    const done = () => watchers.delete(watcher);
    const unsubscribe = liveClient().subscribe(payload, {
      next: ({ data, errors }) => {
        if (errors?.length) {
          done();
          reject(new ApiError(errors[0].message, errors[0].extensions?.code, {}));
          return;
        }
        const task = data.taskUpdated;
        if (task.cursor) payload.variables.after = task.cursor;
        last = task;
        onTask(task);
        if (task.status === 'finished') {
          done();
          unsubscribe();
          resolve(task);
        }
      },
      error: (error) => {
        done();
        reject(
          error instanceof Error
            ? error
            : new Error('The live connection was lost; the task goes on: see Your generations.'),
        );
      },
      // Resubscribed after its finish (a cursor at or past it completes at once): the last seen.
      complete: () => {
        done();
        resolve(last);
      },
    });
  });
}

/** Closes the page's live connection, if one was opened (on signing out). */
export function closeLive() {
  socket?.dispose();
  socket = undefined;
}
