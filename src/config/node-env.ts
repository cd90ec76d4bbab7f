/** What NODE_ENV tells Atelier: whether the development switches and conveniences are off. */
export type NodeEnvironment = 'production' | 'development' | 'test';

const known: readonly NodeEnvironment[] = ['production', 'development', 'test'];

/**
 * NODE_ENV as Atelier reads it: in any letter case, spaces around it ignored; unset or empty is
 * development. Any other value is production, the safe side, with a warning: `Production`, or
 * `prod`, once left introspection and the development switches on, as if it were unset.
 */
export function readNodeEnv(value: string | undefined): {
  environment: NodeEnvironment;
  warning: string | null;
} {
  const said = (value ?? '').trim().toLowerCase();
  if (said === '') return { environment: 'development', warning: null };
  const environment = known.find((name) => name === said);
  if (environment !== undefined) return { environment, warning: null };
  return {
    environment: 'production',
    warning: `NODE_ENV=${value} is not production, development or test: Atelier runs as in production (introspection off, development switches refused).`,
  };
}
