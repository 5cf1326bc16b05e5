// Builds the folder a create-react-app build would be: index.html (with an inline script, as
// CRA's runtime chunk is), static/js/main.js, static/css/main.css and static/media/logo.svg,
// all loaded by relative URLs ("homepage": "." in CRA's terms). Out: build/ beside this file.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';

const here = new URL('.', import.meta.url).pathname;
const out = `${here}build`;
rmSync(out, { recursive: true, force: true });
for (const dir of ['static/js', 'static/css', 'static/media']) mkdirSync(`${out}/${dir}`, { recursive: true });
await build({
  entryPoints: [`${here}src/index.jsx`],
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['chrome100'],
  define: { 'process.env.NODE_ENV': '"production"' },
  jsx: 'automatic',
  outfile: `${out}/static/js/main.js`,
  logLevel: 'warning',
});
copyFileSync(`${here}public/index.html`, `${out}/index.html`);
copyFileSync(`${here}src/main.css`, `${out}/static/css/main.css`);
copyFileSync(`${here}public/logo.svg`, `${out}/static/media/logo.svg`);
