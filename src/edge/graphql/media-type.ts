import type { FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';

/** The media types `/graphql` answers with (GraphQL over HTTP, "Media Types"). */
export const GraphqlMediaType = {
  json: 'application/json; charset=utf-8',
  graphqlResponse: 'application/graphql-response+json; charset=utf-8',
} as const;
export type GraphqlMediaType = (typeof GraphqlMediaType)[keyof typeof GraphqlMediaType];

// On a tie (`*/*`, `application/*`, no Accept at all) application/json wins: the legacy type
// every client reads (GraphQL over HTTP: "assume application/json when accept is missing").
const available = [GraphqlMediaType.json, GraphqlMediaType.graphqlResponse];

/**
 * The media type of the answer: the one the client's `Accept` prefers (q-values honoured),
 * application/json when it names neither.
 */
export function responseMediaType(request: Pick<FastifyRequest, 'headers'>): GraphqlMediaType {
  const accept = request.headers.accept;
  if (accept === undefined) return GraphqlMediaType.json;
  let chosen = negotiated.get(accept);
  if (chosen === undefined) {
    const preferred = new Negotiator({ headers: { accept } }).mediaType(available);
    chosen = preferred === GraphqlMediaType.graphqlResponse ? preferred : GraphqlMediaType.json;
    // Clients send a handful of distinct Accept values; the bound only stops a flood of odd ones.
    if (negotiated.size >= 256) negotiated.clear();
    negotiated.set(accept, chosen);
  }
  return chosen;
}

// Every request is negotiated (DESIGN.md rule 8: no per-request work a cache avoids).
const negotiated = new Map<string, GraphqlMediaType>();

/**
 * The HTTP status of a request error (a document that does not parse, validate, fit the
 * limits, or whose variables do not coerce): with application/graphql-response+json the
 * status says it (400), with application/json the legacy 200 and the `errors` say it
 * (GraphQL over HTTP, "Status Codes" for both media types).
 */
export function requestErrorStatus(mediaType: GraphqlMediaType): 200 | 400 {
  return mediaType === GraphqlMediaType.graphqlResponse ? 400 : 200;
}
