// Makes the embedded database's data-directory template (src/store/pglite-template.ts), so
// that the first `npm start` copies it instead of running PGlite's initdb. Run by `npm
// install` (scripts/postinstall.ts) and by a server whose template is missing.
//
//   node scripts/pglite-template.ts [ROOT]   (default: $XDG_CACHE_HOME/atelier or ~/.cache/atelier)
import { keepWebAssemblyOnBaseline } from '../src/shared/wasm-tiering.ts';

keepWebAssemblyOnBaseline();
const { defaultTemplateRoot, makeTemplate, templateDir } = await import(
  '../src/store/pglite-template.ts'
);
const root = process.argv[2] ?? defaultTemplateRoot();
try {
  await makeTemplate(root);
} catch (error) {
  // The server makes it later, or runs initdb itself: nothing depends on this succeeding.
  process.stderr.write(`Could not make the database template at ${templateDir(root)}: ${error}\n`);
}
