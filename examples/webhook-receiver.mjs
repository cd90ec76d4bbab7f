// A webhook endpoint: ATELIER_WEBHOOK_SECRET=whsec_… node examples/webhook-receiver.mjs [port]
// Each delivery's signature (Standard Webhooks, npm install standardwebhooks) is checked on the
// raw body before anything in it is trusted.
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const webhook = new Webhook(process.env.ATELIER_WEBHOOK_SECRET);

const server = createServer(async (request, response) => {
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  const rawBody = Buffer.concat(chunks).toString('utf8');
  let event;
  try {
    event = webhook.verify(rawBody, request.headers); // throws if forged
  } catch {
    console.error('refused a delivery whose signature does not verify');
    return response.writeHead(400).end();
  }
  // event: { type: 'task.finished', timestamp, data: { taskId, contentId, status, finishCode, finishMessage, kind, modelId } }
  // A message can come twice (at least once): the webhook-id header names it, to deduplicate.
  console.log(`${event.type} ${event.data.taskId ?? ''} (${request.headers['webhook-id']})`);
  response.writeHead(204).end(); // a 2xx at once; slow work belongs after the answer
});
server.listen(Number(process.argv[2] ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/`);
});
