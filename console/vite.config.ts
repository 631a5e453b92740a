// The console's build: `vite build --config console/vite.config.ts` (make console) writes
// dist/console/index.html and content-hashed dist/console/assets/*, which web/serve.ts serves
// under /web/. No source maps in the output: the image ships what the browser needs only.
import { fileURLToPath } from "node:url";
import preact from "@preact/preset-vite";
import { defineConfig } from "vite";

const here = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root: here,
  base: "/web/",
  plugins: [preact()],
  // Keeps the build independent of the working directory and of a .env file lying around.
  envDir: false,
  publicDir: false,
  logLevel: "warn",
  build: {
    outDir: fileURLToPath(new URL("../dist/console", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "assets",
    sourcemap: false,
    // Every asset is a file of its own: an inlined data: URL would need a looser CSP.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: "es2022",
  },
  server: {
    // `vite --config console/vite.config.ts` during development: the API comes from a local
    // platform started with `make start` (its proxy on https://localhost:3080 by default).
    proxy: { "/v1": { target: process.env["SVC_PROXY_URL"] ?? "https://localhost:3080", secure: false } },
  },
});
