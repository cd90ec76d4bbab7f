// Baseline: the MCP SDK's stateless Streamable HTTP transport on bare Fastify, bound the way
// Atelier binds it (a new server and transport per POST, `reply.hijack()`, SSE replies), with
// one tool `get_account` that returns a constant and no authentication; prints {url}.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import Fastify from 'fastify';
import { z } from 'zod';

const account = { alias: 'bench', credit_balances: [{ category: 'standard', amount: 1000 }] };

const app = Fastify();
app.post('/mcp', async (request, reply) => {
  const server = new McpServer({ name: 'sdk-echo', version: '1.0.0' });
  // The same output schema as Atelier's tool: the SDK validates structuredContent against it.
  server.registerTool(
    'get_account',
    {
      description: 'A constant account.',
      outputSchema: {
        alias: z.string(),
        credit_balances: z.array(z.object({ category: z.string(), amount: z.number() })),
      },
    },
    async () => ({
      content: [{ type: 'text', text: JSON.stringify(account) }],
      structuredContent: account,
    }),
  );
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  reply.hijack();
  reply.raw.on('close', () => {
    transport.close().catch(() => {});
    server.close().catch(() => {});
  });
  await server.connect(transport);
  await transport.handleRequest(request.raw, reply.raw, request.body);
  return reply;
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(JSON.stringify({ url }));
process.on('SIGTERM', () => {
  app.close().catch(() => process.exit(1));
});
