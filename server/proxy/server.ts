// startProxyServer: the proxy's one public port (:3080 by default). A plain TCP listener reads each
// connection's ClientHello and routes it (routing/router.ts): to a registered ALPN handler, raw to
// auth's gRPC port, or to the HTTPS server that serves the web API, WebSockets and the console.
import { createServer, type Server } from "node:net";
import type { FastifyInstance } from "fastify";
import { buildProxyApp, type ProxyDeps } from "./app.ts";
import { type ConnectionHandler, TlsRouter } from "./routing/router.ts";

export type { ClientHelloInfo, ConnectionHandler } from "./routing/router.ts";
export { TlsRouter } from "./routing/router.ts";

/** What other parts of the proxy may do with the public port's router. */
export interface ProxyRouter {
  /** Connections offering `alpnProtocol` go to `handler` (the TLS is the handler's to terminate). */
  handle(alpnProtocol: string, handler: ConnectionHandler): void;
  has(alpnProtocol: string): boolean;
}

export interface ProxyServer {
  app: FastifyInstance;
  /** e.g. https://127.0.0.1:43121 (the bound address, not the public one) */
  url: string;
  port: number;
  router: ProxyRouter;
  close(): Promise<void>;
}

/** In-flight HTTPS requests get this long to finish at close before their connections are cut. */
const WEB_CLOSE_GRACE_MS = 5_000;

export async function startProxyServer(deps: ProxyDeps): Promise<ProxyServer> {
  let router: TlsRouter | undefined;
  const app = await buildProxyApp(deps, {
    tlsRouting: () => ({
      auth_server_name: router?.authServerName ?? "",
      tunnel: router?.has("svc-tunnel") ?? false,
    }),
  });
  await app.ready();
  const https = app.server;
  // The HTTPS server never listens itself (connections are handed to it), so its connection
  // tracking (header / request timeouts, idle-connection close) is started as `listen` would.
  https.emit("listening");
  const active = new TlsRouter({
    logger: deps.logger,
    web: (socket) => https.emit("connection", socket),
    apps: deps.apps ? (socket) => deps.apps?.handle(socket) : undefined,
    authPassthrough: deps.authPassthrough,
    publicHost: new URL(deps.config.publicUrl).hostname,
    helloTimeoutMs: deps.config.clientHelloTimeoutMs,
    metrics: deps.metrics,
  });
  router = active;
  const listener: Server = createServer({ noDelay: true }, (socket) => active.accept(socket));
  try {
    await new Promise<void>((resolve, reject) => {
      listener.once("error", reject);
      listener.listen({ host: deps.config.listenHost, port: deps.config.listenPort }, () => {
        listener.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    await app.close();
    throw err;
  }
  listener.on("error", (err) => deps.logger.error({ err: err.message }, "public listener failed"));
  const address = listener.address();
  if (address === null || typeof address === "string") throw new Error("proxy did not bind a TCP port");
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    app,
    url: `https://${host}:${address.port}`,
    port: address.port,
    router: active,
    close: async () => {
      // Every accepted connection (of any route) holds the listener open until it is gone.
      const drained = new Promise<void>((resolve) => listener.close(() => resolve()));
      active.close();
      await app.close();
      // Idle keep-alive connections go now; ones with a request in flight get a grace.
      https.close(() => {});
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        drained,
        new Promise((resolve) => (timer = setTimeout(resolve, WEB_CLOSE_GRACE_MS))),
      ]);
      clearTimeout(timer);
      active.destroyWeb();
      await drained;
    },
  };
}
export type { ProxyDeps };
