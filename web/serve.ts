// Serves the browser UI under /web/: a few static pages, their scripts, and the xterm.js ESM
// builds straight from node_modules (no bundler). Everything is read once at start-up into memory
// and served from our own origin, so the CSP stays "script-src 'self'" with no inline script.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from "fastify";
import { NotFoundError } from "../core/errors.ts";

interface Asset {
  body: Buffer;
  type: string;
}

const here = import.meta.dirname;
const require = createRequire(import.meta.url);

function packageDir(name: string): string {
  // "main" resolves to <pkg>/lib/<file>.js; the package folder is one above.
  return dirname(dirname(require.resolve(name)));
}

const typeOf = (file: string): string =>
  file.endsWith(".html")
    ? "text/html; charset=utf-8"
    : file.endsWith(".css")
      ? "text/css; charset=utf-8"
      : "text/javascript; charset=utf-8";

function load(path: string): Asset {
  return { body: readFileSync(path), type: typeOf(path) };
}

/** Our pages, by route path. */
const PAGES: Record<string, string> = {
  "/web/": "index.html",
  "/web/login": "login.html",
  "/web/terminal": "terminal.html",
  "/web/recordings/:id": "recording.html",
};

/** Our scripts and styles, served at /web/assets/<name>. */
const ASSETS = ["common.js", "login.js", "terminal.js", "recording.js", "index.js", "style.css"];

/** Third-party browser modules, served at /web/vendor/<name>. */
function vendorFiles(): Record<string, string> {
  const xterm = packageDir("@xterm/xterm");
  const fit = packageDir("@xterm/addon-fit");
  return {
    "xterm.mjs": join(xterm, "lib", "xterm.mjs"),
    "xterm.css": join(xterm, "css", "xterm.css"),
    "addon-fit.mjs": join(fit, "lib", "addon-fit.mjs"),
  };
}

export function webRoutes(): FastifyPluginAsync {
  const assets = new Map<string, Asset>(ASSETS.map((name) => [name, load(join(here, name))]));
  const vendor = new Map<string, Asset>(
    Object.entries(vendorFiles()).map(([name, path]) => [name, load(path)]),
  );
  const pages = new Map<string, Asset>(
    Object.entries(PAGES).map(([route, file]) => [route, load(join(here, file))]),
  );

  const send = (reply: FastifyReply, asset: Asset, cache: string): FastifyReply =>
    reply.header("content-type", asset.type).header("cache-control", cache).send(asset.body);

  return async (app: FastifyInstance) => {
    for (const [route, asset] of pages) {
      // Pages need no session to load: each one asks the API and goes to /web/login on 401.
      app.get(route, { schema: { hide: true } }, async (_request, reply) => send(reply, asset, "no-store"));
    }
    app.get("/web", { schema: { hide: true } }, async (_request, reply) => reply.redirect("/web/"));
    app.get<{ Params: { name: string } }>(
      "/web/assets/:name",
      { schema: { hide: true } },
      async (request, reply) => {
        const asset = assets.get(request.params.name);
        if (!asset) throw new NotFoundError("no such asset");
        return send(reply, asset, "no-cache");
      },
    );
    app.get<{ Params: { name: string } }>(
      "/web/vendor/:name",
      { schema: { hide: true } },
      async (request, reply) => {
        const asset = vendor.get(request.params.name);
        if (!asset) throw new NotFoundError("no such asset");
        // Versioned by the lockfile; revalidated so an upgrade shows up after a restart.
        return send(reply, asset, "no-cache");
      },
    );
  };
}
