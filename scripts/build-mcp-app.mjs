// Builds the live call view (DESIGN §9c) into one HTML document: mcp/app/view/call.ts, with
// ext-apps' App and what it imports, bundled by esbuild and written inline into call.html's
// <script>, so the view loads nothing from anywhere (its CSP allows nothing outside).
// Part of `npm run build`; the service serves dist/mcp-app/call.html (mcp/app/resource.ts).

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { build } from "esbuild";

const root = join(import.meta.dirname, "..");
const source = join(root, "mcp", "app", "view");
const target = join(root, "dist", "mcp-app", "call.html");
const MARK = "<script>/* VIEW SCRIPT */</script>";

/**
 * zod re-exports every locale's error messages (z.locales), and the bundle cannot drop them: half
 * the view's size. It sets English itself and the view reads no other, so the bundle keeps only that.
 */
const englishOnly = {
  name: "zod-english-only",
  setup(plugin) {
    plugin.onResolve({ filter: /\/locales\/index\.js$/ }, ({ importer, resolveDir }) =>
      importer.includes(`${join("node_modules", "zod")}`) ? { path: join(resolveDir, "..", "locales", "index.js"), namespace: "zod-english-only" } : undefined,
    );
    plugin.onLoad({ filter: /.*/, namespace: "zod-english-only" }, ({ path }) => ({
      contents: `export { default as en } from ${JSON.stringify(join(dirname(path), "en.js"))};`,
      resolveDir: dirname(path),
    }));
  },
};

const { outputFiles } = await build({
  entryPoints: [join(source, "call.ts")],
  bundle: true,
  write: false,
  format: "iife",
  platform: "browser",
  target: "es2022",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
  plugins: [englishOnly],
});
const script = outputFiles[0].text;
// esbuild escapes "</script" inside strings; this makes sure nothing else could end the tag early.
if (/<\/script/i.test(script)) throw new Error("the bundled view contains </script and cannot be inlined");

const template = readFileSync(join(source, "call.html"), "utf8");
if (!template.includes(MARK)) throw new Error(`mcp/app/view/call.html has no ${MARK}`);
mkdirSync(dirname(target), { recursive: true });
// A function as replacement: the bundle's "$&" or "$1" are code, not replacement patterns.
writeFileSync(
  target,
  template.replace(MARK, () => `<script>${script}</script>`),
);
