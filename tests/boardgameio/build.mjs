// Builds what the tests upload, into build/ beside this file:
//   build/hooks/<game>.js  each entries/<game>.js bundled as docs/boardgameio.md says: the game,
//                          turnhouse-boardgameio/server and boardgame.io/internal in one ES module;
//   build/board/           the React board (board/), bundled for the page's frame.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';

const here = new URL('.', import.meta.url).pathname;
const out = `${here}build`;
rmSync(out, { recursive: true, force: true });
mkdirSync(`${out}/board`, { recursive: true });
const production = { 'process.env.NODE_ENV': '"production"' };
for (const entry of readdirSync(`${here}entries`)) {
  await build({
    entryPoints: [`${here}entries/${entry}`],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    preserveSymlinks: true,
    define: production,
    outfile: `${out}/hooks/${entry}`,
    logLevel: 'warning',
  });
}
await build({
  entryPoints: [`${here}board/index.jsx`],
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['chrome100'],
  define: production,
  jsx: 'automatic',
  preserveSymlinks: true,
  outfile: `${out}/board/main.js`,
  logLevel: 'warning',
});
copyFileSync(`${here}board/index.html`, `${out}/board/index.html`);
