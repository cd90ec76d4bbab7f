// Floor: the MCP SDK's stateless Streamable HTTP transport on bare Fastify, bound like
// sdk-echo (a new server and transport per POST), whose `get_account` does the work Atelier's
// does and nothing else: the same RS256 access token verified with jose (issuer, audience,
// `typ`, required claims, age, the exact audience, the scope) against Atelier's published
// keys, then ONE query — the stored token live (not revoked, not expired), its account, and
// the balances — on raw `pg` (a pool of 10, Atelier's default) or on PGlite (started as
// src/store/database.ts starts it). Prints {url, token}.
//
// It runs on the database Atelier's bench server built and left (migrations, the account and
// its token): BENCH_MCP_TOKEN is that token, BENCH_MCP_JWKS Atelier's published keys.
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import Fastify from 'fastify';
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import pg from 'pg';
import { z } from 'zod';
import { loadConfig } from '../../../src/config/config.ts';
import { keepWebAssemblyOnBaseline } from '../../../src/shared/wasm-tiering.ts';
import { pgliteStartParams } from '../../../src/store/database.ts';

keepWebAssemblyOnBaseline(); // PGlite on the same compiler as Atelier's

const config = loadConfig({
  env: { ...process.env, LOG_LEVEL: 'silent', RATE_LIMIT_PER_WINDOW: '0' },
  cwd: process.cwd(),
});
const token = process.env.BENCH_MCP_TOKEN;
const publicKeys = process.env.BENCH_MCP_JWKS;
if (!token || !publicKeys) throw new Error('BENCH_MCP_TOKEN and BENCH_MCP_JWKS are required');
const jwks = createLocalJWKSet(JSON.parse(publicKeys) as JSONWebKeySet);

const { issuer, resource } = config.oauth;
const scope = 'mcp:access';

interface Row {
  alias: string;
  status: string;
  balances: { category: string; amount: number }[];
}
const oneQuery = `
  select a.alias, a.status,
    coalesce((select json_agg(json_build_object('category', b.category, 'amount', b.amount)
                order by b.category)
              from credit_balances b where b.account_id = a.id), '[]') as balances
  from oauth_tokens t join accounts a on a.id = t.account_id
  where t.jti = $1 and t.revoked_at is null and t.expires_at > now()`;

let query: (jti: string) => Promise<Row | undefined>;
if (config.databaseUrl !== undefined) {
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 10 });
  query = async (jti) => (await pool.query<Row>(oneQuery, [jti])).rows[0];
} else {
  const pglite = new PGlite(path.join(config.dataDir, 'pglite'), {
    startParams: [...pgliteStartParams],
  });
  await pglite.waitReady;
  query = async (jti) => (await pglite.query<Row>(oneQuery, [jti])).rows[0];
}

/** The account the token speaks for, or null when any check refuses it. */
async function authenticate(authorization: string | undefined): Promise<Row | null> {
  const bearer = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
  if (bearer === undefined) return null;
  let claims: Record<string, unknown>;
  try {
    ({ payload: claims } = await jwtVerify(bearer, jwks, {
      issuer,
      audience: resource,
      algorithms: ['RS256'],
      typ: 'at+jwt',
      requiredClaims: ['sub', 'jti', 'exp', 'iat', 'client_id'],
      maxTokenAge: 7 * 86_400,
      clockTolerance: 30,
    }));
  } catch {
    return null;
  }
  if (claims.aud !== resource) return null;
  if (
    !String(claims.scope ?? '')
      .split(' ')
      .includes(scope)
  )
    return null;
  const row = await query(String(claims.jti));
  return row?.status === 'active' ? row : null;
}

const app = Fastify();
app.post('/mcp', async (request, reply) => {
  const account = await authenticate(request.headers.authorization);
  if (account === null) return reply.code(401).send({ error: 'invalid_token' });
  const structured = { alias: account.alias, credit_balances: account.balances };
  const server = new McpServer({ name: 'sdk-floor', version: '1.0.0' });
  server.registerTool(
    'get_account',
    {
      description: 'The account and its balances.',
      outputSchema: {
        alias: z.string(),
        credit_balances: z.array(z.object({ category: z.string(), amount: z.number() })),
      },
    },
    async () => ({
      content: [{ type: 'text', text: JSON.stringify(structured) }],
      structuredContent: structured,
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
console.log(JSON.stringify({ url, token }));
process.on('SIGTERM', () => {
  app.close().catch(() => process.exit(1));
});
