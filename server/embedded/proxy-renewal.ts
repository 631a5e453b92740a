// The embedded proxy's own certificates (`svcd start`), renewed live as auth's are: its TLS server
// certificate (public port, tunnels, peering) and its client certificate for its gRPC calls to
// auth. Each is re-issued at half its life (ServerCertRenewer); new connections get the new server
// certificate, and the gRPC clients are rebuilt with the new client certificate while routes keep
// one forwarding handle. Calls that began on the old clients finish; they are closed after a grace.
import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../logger.ts";
import { forwarding } from "../proxy/api-layers.ts";
import { ServerCertRenewer } from "../roles/server-cert-renewal.ts";
import type { TlsIdentity } from "../wiring.ts";

/** What the proxy's gRPC clients to auth have in common here. */
export interface ClosableClient {
  close(): void;
}

export interface EmbeddedProxyIdentityOptions<C extends Record<string, ClosableClient>> {
  serverTls: TlsIdentity;
  clientTls: TlsIdentity;
  issueServerTls: () => Promise<TlsIdentity>;
  issueClientTls: () => Promise<TlsIdentity>;
  /** builds every gRPC client to auth for one client certificate */
  clients: (clientTls: TlsIdentity) => C;
  clock: Clock;
  logger: Logger;
  /** old clients are closed this long after a rebuild; default 60 s */
  graceMs?: number;
}

export class EmbeddedProxyIdentity<C extends Record<string, ClosableClient>> {
  readonly #o: EmbeddedProxyIdentityOptions<C>;
  #server: TlsIdentity;
  #client: TlsIdentity;
  #clients: C;
  readonly #onServer = new Set<(t: TlsIdentity) => void>();
  /** rebuilt-away clients waiting for their grace to end */
  readonly #retired = new Map<NodeJS.Timeout, C>();
  readonly #serverRenewer: ServerCertRenewer;
  readonly #clientRenewer: ServerCertRenewer;

  constructor(o: EmbeddedProxyIdentityOptions<C>) {
    this.#o = o;
    this.#server = o.serverTls;
    this.#client = o.clientTls;
    this.#clients = o.clients(o.clientTls);
    const log = o.logger.child({ component: "proxy-identity" });
    this.#serverRenewer = new ServerCertRenewer({
      current: o.serverTls,
      issue: o.issueServerTls,
      apply: (t) => this.#setServer(t),
      clock: o.clock,
      logger: log,
    });
    this.#clientRenewer = new ServerCertRenewer({
      current: o.clientTls,
      issue: o.issueClientTls,
      apply: (t) => this.#setClient(t),
      clock: o.clock,
      logger: log,
    });
  }

  /** The server certificate in force (read it per connection). */
  serverTls(): TlsIdentity {
    return this.#server;
  }

  /** The client certificate in force for calls to auth (read it per connection). */
  clientTls(): TlsIdentity {
    return this.#client;
  }

  /** A handle on one client that always reaches the one built for the certificate in force. */
  client<K extends keyof C>(name: K): C[K] {
    return forwarding(() => this.#clients[name]);
  }

  /** Runs `fn` with every new server certificate (e.g. setSecureContext on the HTTPS server). */
  onServerTls(fn: (t: TlsIdentity) => void): void {
    this.#onServer.add(fn);
  }

  /** When each certificate is due (ms since the epoch). */
  renewAt(): { server: number; client: number } {
    return { server: this.#serverRenewer.renewAt, client: this.#clientRenewer.renewAt };
  }

  start(): void {
    this.#serverRenewer.start();
    this.#clientRenewer.start();
  }

  /** Re-issues both certificates now, whatever their age (operators and tests). */
  async renewNow(): Promise<void> {
    this.#setServer(await this.#o.issueServerTls());
    this.#setClient(await this.#o.issueClientTls());
  }

  /** Checks both renewers now (the clock decides; what the timers do). */
  async check(): Promise<void> {
    await this.#serverRenewer.check();
    await this.#clientRenewer.check();
  }

  close(): void {
    this.#serverRenewer.stop();
    this.#clientRenewer.stop();
    for (const [t, old] of this.#retired) {
      clearTimeout(t);
      closeAll(old);
    }
    this.#retired.clear();
    closeAll(this.#clients);
  }

  #setServer(t: TlsIdentity): void {
    this.#server = t;
    for (const fn of this.#onServer) fn(t);
    this.#o.logger.info("proxy TLS server certificate renewed");
  }

  #setClient(t: TlsIdentity): void {
    const old = this.#clients;
    this.#client = t;
    this.#clients = this.#o.clients(t);
    const timer = setTimeout(() => {
      this.#retired.delete(timer);
      closeAll(old);
    }, this.#o.graceMs ?? 60_000);
    timer.unref();
    this.#retired.set(timer, old);
    this.#o.logger.info("proxy client certificate to auth renewed");
  }
}

function closeAll(clients: Record<string, ClosableClient>): void {
  for (const c of Object.values(clients)) c.close();
}
