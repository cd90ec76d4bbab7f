// Which Node runs Atelier, and what to tell someone whose Node does not. Plain JavaScript that
// any Node parses and runs: bin/atelier and the npm postinstall load it before anything else.

/** Atelier runs TypeScript directly, which Node does from 22.18 on. */
export function isSupportedNode(version = process.versions.node) {
  const [major, minor] = version.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 18);
}

/** What to install, and how, in a few lines (no stack trace). */
export function howToGetNode(version = process.version) {
  return [
    `Atelier needs Node.js 22.18 or later (Node 24 LTS is tested); this is ${version}.`,
    'Install Node 24, then run the command again:',
    '  with nvm or fnm (they read .nvmrc):  nvm install && nvm use   or   fnm use --install-if-missing',
    '  with npm alone:  npm install --no-save --prefix ~/.cache/node24 node@24',
    '                   export PATH=~/.cache/node24/node_modules/.bin:$PATH',
    '',
  ].join('\n');
}
