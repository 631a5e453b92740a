// A diagnostics listener per process: Prometheus metrics (prom-client), a liveness probe and, when
// the role gives a ready() check, a readiness probe, on its own address so metrics are never
// exposed on the public port.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { collectDefaultMetrics, Registry } from "prom-client";

export interface Diagnostics {
  registry: Registry;
  server: Server;
  port: number;
  close(): Promise<void>;
}

export function createMetricsRegistry(component: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ component });
  collectDefaultMetrics({ register: registry });
  return registry;
}

export interface DiagnosticsOptions {
  /** /readyz answers 200 when this holds, 503 otherwise (or when it throws); 404 without it. */
  ready?: () => boolean | Promise<boolean>;
  /** More fields of the /healthz answer (e.g. the agent's trust snapshot age); status stays "ok". */
  health?: () => Record<string, unknown>;
}

export async function startDiagnostics(
  registry: Registry,
  host: string,
  port: number,
  opts: DiagnosticsOptions = {},
): Promise<Diagnostics> {
  const server = createServer((req, res) => {
    const ready = opts.ready;
    if (req.method === "GET" && req.url === "/readyz" && ready) {
      Promise.resolve()
        .then(ready)
        .catch(() => false)
        .then((ok) => {
          res
            .writeHead(ok ? 200 : 503, { "content-type": "application/json" })
            .end(ok ? '{"status":"ready"}' : '{"status":"not ready"}');
        });
      return;
    }
    if (req.method === "GET" && req.url === "/metrics") {
      registry
        .metrics()
        .then((body) => {
          res.writeHead(200, { "content-type": registry.contentType });
          res.end(body);
        })
        .catch(() => {
          res.writeHead(500).end();
        });
      return;
    }
    if (req.method === "GET" && req.url === "/healthz") {
      const extra = opts.health?.() ?? {};
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ status: "ok", ...extra }));
      return;
    }
    res
      .writeHead(404, { "content-type": "application/json" })
      .end('{"error":{"code":"not_found","message":"not found"}}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    registry,
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
