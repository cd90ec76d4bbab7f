/** A registered portless `http://localhost/…` callback: any port of the request is accepted. */
const portlessLocalhost = /^http:\/\/localhost(\/[^?#]*)?(\?[^#]*)?$/;
const localhostWithPort = /^http:\/\/localhost:([1-9][0-9]{0,4})(\/[^?#]*)?(\?[^#]*)?$/;

/**
 * Spec §4.3 "Redirect URI matching": fixed-port localhost and HTTPS callbacks match exactly,
 * character for character; for an explicitly registered portless `http://localhost` callback,
 * any canonical port from 1 to 65535 (no leading zero) is accepted while scheme, host, path
 * and raw query stay exact. Userinfo, fragments, `127.0.0.1` for `localhost`, a prefix or a
 * longer path all fail, because nothing but these two rules ever matches.
 */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const withPort = localhostWithPort.exec(requested);
  if (withPort === null || Number(withPort[1]) > 65_535) return false;
  const rest = `${withPort[2] ?? ''}${withPort[3] ?? ''}`;
  return registered.some((uri) => {
    const portless = portlessLocalhost.exec(uri);
    return portless !== null && `${portless[1] ?? ''}${portless[2] ?? ''}` === rest;
  });
}
