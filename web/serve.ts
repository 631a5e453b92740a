// Serves the browser console under /web/: the Vite build in dist/console (make console), read once
// at start-up into memory. Content-hashed assets are cached for a year; index.html, the same for
// every console route, is revalidated on each load so a new build shows up at once. Everything is
// served from our own origin, so the CSP stays "script-src 'self'" with no inline script.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, extname, join } from "node:path";
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from "fastify";
import { NotFoundError } from "../core/errors.ts";

interface Asset {
  body: Buffer;
  type: string;
}

const here = import.meta.dirname;
const require = createRequire(import.meta.url);

/** Where `make console` writes the build (the image ships it at the same place). */
export const CONSOLE_DIST = join(here, "..", "dist", "console");

/** The console's routes: each answers index.html and the client-side router shows the page. */
export const CONSOLE_ROUTES = [
  "/web/login",
  "/web/reset",
  "/web/nodes",
  "/web/apps",
  "/web/launch/:host",
  "/web/terminal",
  "/web/recordings",
  "/web/recordings/:id",
  "/web/audit",
  "/web/users",
  "/web/roles",
  "/web/tokens",
  "/web/bots",
  "/web/account",
];

const RESET_ROUTE = "/web/reset";

/** The old UI's stylesheet, still linked by the SSO error page (server/proxy/routes/sso.ts). */
const LEGACY_ASSETS = ["style.css"];

const IMMUTABLE = "public, max-age=31536000, immutable";

/**
 * The recording player (asciinema-player) runs its terminal emulator as WebAssembly, which
 * "script-src 'self'" forbids compiling: its page alone adds 'wasm-unsafe-eval' (WebAssembly
 * only, never eval or inline script). Links to it load a new document, since a client-side route
 * change keeps the policy of the page it started on. No page allows inline styles.
 */
export const PLAYER_ROUTE = "/web/recordings/:id";

function allowWasm(reply: FastifyReply): void {
  const csp = reply.getHeader("content-security-policy");
  if (typeof csp !== "string") return;
  reply.header(
    "content-security-policy",
    csp.replace(/(^|;\s*)script-src 'self'(?=;|$)/, "$1script-src 'self' 'wasm-unsafe-eval'"),
  );
}

function packageDir(name: string): string {
  // "main" resolves to <pkg>/lib/<file>.js; the package folder is one above.
  return dirname(dirname(require.resolve(name)));
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
};

function load(path: string): Asset {
  return { body: readFileSync(path), type: TYPES[extname(path)] ?? "application/octet-stream" };
}

/** Third-party browser modules of the legacy terminal page, served at /web/vendor/<name>. */
function vendorFiles(): Record<string, string> {
  const xterm = packageDir("@xterm/xterm");
  const fit = packageDir("@xterm/addon-fit");
  return {
    "xterm.mjs": join(xterm, "lib", "xterm.mjs"),
    "xterm.css": join(xterm, "css", "xterm.css"),
    "addon-fit.mjs": join(fit, "lib", "addon-fit.mjs"),
  };
}

/** Answered on console routes when dist/console is missing: the API works, the pages say why not. */
const NOT_BUILT: Asset = {
  body: Buffer.from(
    '<!doctype html><html lang="en"><meta charset="utf-8"><title>Console not built</title>' +
      "<h1>The web console is not built</h1><p>Run <code>make console</code> and restart.</p></html>",
  ),
  type: TYPES[".html"] ?? "text/html",
};

/** The built console: index.html and the hashed assets by file name (undefined when not built). */
export function loadConsole(
  dist: string = CONSOLE_DIST,
): { index: Asset; assets: Map<string, Asset> } | undefined {
  const indexPath = join(dist, "index.html");
  if (!existsSync(indexPath)) return undefined;
  const assetsDir = join(dist, "assets");
  const assets = new Map<string, Asset>();
  for (const name of existsSync(assetsDir) ? readdirSync(assetsDir) : []) {
    assets.set(name, load(join(assetsDir, name)));
  }
  return { index: load(indexPath), assets };
}

export function webRoutes(opts: { dist?: string } = {}): FastifyPluginAsync {
  const built = loadConsole(opts.dist) ?? { index: NOT_BUILT, assets: new Map<string, Asset>() };
  const status = built.index === NOT_BUILT ? 503 : 200;
  const legacy = new Map<string, Asset>(LEGACY_ASSETS.map((name) => [name, load(join(here, name))]));
  const vendor = new Map<string, Asset>(
    Object.entries(vendorFiles()).map(([name, path]) => [name, load(path)]),
  );

  const send = (reply: FastifyReply, asset: Asset, cache: string): FastifyReply =>
    reply.header("content-type", asset.type).header("cache-control", cache).send(asset.body);

  return async (app: FastifyInstance) => {
    // Pages need no session to load: the console asks the API and goes to sign-in on 401.
    for (const route of CONSOLE_ROUTES) {
      app.get(route, { schema: { hide: true } }, async (_request, reply) => {
        reply.code(status);
        if (route === PLAYER_ROUTE) allowWasm(reply);
        // The reset link carries its token in the query: never cached, never sent on as a Referer.
        if (route === RESET_ROUTE) {
          return send(reply.header("referrer-policy", "no-referrer"), built.index, "no-store");
        }
        return send(reply, built.index, "no-cache");
      });
    }
    // The console's start page; SSO and old bookmarks land on /web/ (the query stays).
    for (const route of ["/web", "/web/"]) {
      app.get(route, { schema: { hide: true } }, async (request, reply) => {
        const q = request.url.indexOf("?");
        return reply.redirect(`/web/nodes${q === -1 ? "" : request.url.slice(q)}`);
      });
    }
    app.get<{ Params: { name: string } }>(
      "/web/assets/:name",
      { schema: { hide: true } },
      async (request, reply) => {
        const name = request.params.name;
        const hashed = built.assets.get(name);
        if (hashed) return send(reply, hashed, IMMUTABLE);
        const old = legacy.get(name);
        if (old) return send(reply, old, "no-cache");
        throw new NotFoundError("no such asset");
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
