// A benchmark's GraphQL client: one POST to an Atelier server with its API key.

/** Queries `url`'s /graphql as the holder of `apiKey`; anything but data without errors throws. */
export function graphqlClient(url: string, apiKey: string) {
  return async function graphql<T>(
    query: string,
    variables: Record<string, unknown> = {},
  ): Promise<T> {
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data?: T; errors?: unknown };
    if (res.status !== 200 || body.errors !== undefined || body.data === undefined)
      throw new Error(`GraphQL answered ${res.status}: ${JSON.stringify(body)}`);
    return body.data;
  };
}
