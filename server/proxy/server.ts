// startProxyServer: the listening HTTPS proxy (:3080 by default).
import type { FastifyInstance } from "fastify";
import { buildProxyApp, type ProxyDeps } from "./app.ts";

export interface ProxyServer {
  app: FastifyInstance;
  /** e.g. https://127.0.0.1:43121 (the bound address, not the public one) */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startProxyServer(deps: ProxyDeps): Promise<ProxyServer> {
  const app = await buildProxyApp(deps);
  await app.listen({ host: deps.config.listenHost, port: deps.config.listenPort });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("proxy did not bind a TCP port");
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    app,
    url: `https://${host}:${address.port}`,
    port: address.port,
    close: async () => {
      await app.close();
    },
  };
}
export type { ProxyDeps };
