/** The answer of one GraphQL request, as a client sees it. */
export interface GraphqlResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: {
    data?: T | null;
    errors?: Array<{
      message: string;
      path?: Array<string | number>;
      extensions?: Record<string, unknown> & { code?: string };
    }>;
  };
}

export interface GraphqlRequest {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  headers?: Record<string, string>;
}

/** POSTs a GraphQL request with fetch, the way any client would. */
export async function graphql<T = Record<string, unknown>>(
  baseUrl: string,
  request: GraphqlRequest,
): Promise<GraphqlResponse<T>> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...request.headers,
  };
  if (request.apiKey !== undefined) headers.authorization = `Bearer ${request.apiKey}`;
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      query: request.query,
      variables: request.variables,
      operationName: request.operationName,
    }),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as GraphqlResponse<T>['body'],
  };
}

/** The codes of the response's errors, in order. */
export function errorCodes(response: GraphqlResponse<unknown>): string[] {
  return (response.body.errors ?? []).map((e) => String(e.extensions?.code));
}
