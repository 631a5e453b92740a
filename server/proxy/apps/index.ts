// Application access at the proxy (docs/apps.md), assembled once for both ways the proxy runs
// (`svcd start` and `svcd proxy`): the app-session cache over auth's app RPCs, and the app hosts'
// HTTPS server the public port's router hands app connections to.
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { Clock } from "../../../core/clock.ts";
import type { AuthConnection } from "../../auth/client.ts";
import type { ProxyTls } from "../config.ts";
import type { ProxyLocks } from "../locks.ts";
import type { SessionCache } from "../session-cache.ts";
import { type AppAuthApi, type AppGrant, GrpcAppAuthApi } from "./auth-api.ts";
import { AppGrants } from "./grants.ts";
import type { AppHostCerts } from "./host-certs.ts";
import { AppServer } from "./server.ts";

export type { AppAuthApi, AppGrant } from "./auth-api.ts";
export { GrpcAppAuthApi } from "./auth-api.ts";
export { AppHostCerts } from "./host-certs.ts";

export interface AppAccess {
  /** The router's handler for connections whose SNI names an app host. */
  handle: AppServer["handle"];
  /** Follows a renewal of the proxy's server certificate. */
  setTls(certPem: string, keyPem: string): void;
  close(): Promise<void>;
}

export function startAppAccess(o: {
  /** The proxy's connection to auth now (read at every call: reloads and renewals are followed). */
  connection: () => AuthConnection;
  publicUrl: string;
  tls: ProxyTls;
  /**
   * Where the proxy holds the host CA (`svcd start`): per-host certificates for app hosts, in
   * place of `tls.sniCallback`, dropped whenever the proxy's certificate changes (renewal, CA rotation).
   */
  hostCerts?: AppHostCerts;
  locks: Pick<ProxyLocks, "check" | "track">;
  sessions: Pick<SessionCache, "revoked" | "onChange">;
  clock: Clock;
  logger: Logger;
  metrics?: Registry;
  /** Tests give their own; default the gRPC client over `connection`. */
  api?: AppAuthApi;
}): AppAccess {
  const grants = new AppGrants({ api: o.api ?? new GrpcAppAuthApi(o.connection), clock: o.clock });
  const server = new AppServer({
    publicUrl: o.publicUrl,
    tls: o.hostCerts ? { ...o.tls, sniCallback: o.hostCerts.sniCallback } : o.tls,
    grants,
    checkLock: (user) => o.locks.check(user),
    trackOpen: (user, close) => o.locks.track(user, close),
    webSessionRevoked: (hash) => o.sessions.revoked(hash),
    clock: o.clock,
    logger: o.logger,
    metrics: o.metrics,
  });
  // A user or role change the session stream reports is re-decided at the user's next request,
  // and at once for their open WebSockets; a revoked web session closes those it opened.
  const offChanges = o.sessions.onChange((c) => {
    if (c.kind === "revoked") {
      server.closeOpen((g) => g.webSessionHash === c.hash);
      return;
    }
    const which =
      c.kind === "user"
        ? (g: AppGrant) => g.username === c.username
        : c.kind === "role"
          ? (g: AppGrant) => g.roles.includes(c.role)
          : () => true;
    grants.recheck(which);
    server.recheckOpen(which);
  });
  return {
    handle: (socket) => server.handle(socket),
    setTls: (certPem, keyPem) => {
      server.setTls(certPem, keyPem);
      o.hostCerts?.reset();
    },
    async close() {
      offChanges();
      server.close();
      grants.clear();
    },
  };
}
