// Backend.publish/subscribe on PostgreSQL: NOTIFY through the pool, LISTEN on one dedicated
// connection per backend (a pooled connection would be handed to other queries). Channels are
// prefixed with the schema, so clusters sharing one database never hear each other. When the
// listening connection is lost, subscribers are told (listening false: messages may be missed)
// and it is opened again with a capped backoff; they are told again once it listens. A connection
// that goes quiet without an error (a half-open link) would hear nothing and say nothing: a probe
// query every probeMs that has not come back by the next one counts as the connection lost.
import { createHash } from "node:crypto";
import pg from "pg";
import type { NotificationHandler } from "./backend.ts";
import { checkChannel, LocalNotifier } from "./notify.ts";

const BACKOFF_MS = { initial: 100, max: 5_000 };
/** How often the listening connection is probed (a stall is noticed within two of these). */
export const DEFAULT_PROBE_MS = 5_000;
/** How long close() waits for the listening connection to end (a stalled one never does). */
const CLOSE_WAIT_MS = 1_000;

export class PostgresNotifier {
  readonly #connectionString: string;
  readonly #prefix: string;
  readonly #local = new LocalNotifier();
  #client: pg.Client | undefined;
  #connecting: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  #attempt = 0;
  #closed = false;
  readonly #probeMs: number;
  #probe: NodeJS.Timeout | undefined;

  constructor(connectionString: string, schema: string, o: { probeMs?: number } = {}) {
    this.#connectionString = connectionString;
    this.#probeMs = Math.max(10, o.probeMs ?? DEFAULT_PROBE_MS);
    // PostgreSQL cuts identifiers at 63 bytes: a long schema name is shortened to a digest of it.
    this.#prefix =
      schema.length <= 20
        ? `${schema}__`
        : `s${createHash("sha256").update(schema).digest("hex").slice(0, 19)}__`;
    this.#local.setListening(false);
  }

  /** The listening connection's application_name (pg_stat_activity): the schema's prefix. */
  get applicationName(): string {
    return `svc-listen ${this.#prefix}`;
  }

  /** The PostgreSQL channel of a backend channel. */
  pgChannel(channel: string): string {
    checkChannel(channel);
    return this.#prefix + channel;
  }

  /**
   * Registers the handler and makes sure the connection listens on the channel. Resolves once
   * it does, or after a failed attempt (the handler then hears `listening(true)` on recovery).
   */
  async subscribe(channel: string, handler: NotificationHandler): Promise<() => Promise<void>> {
    const name = this.pgChannel(channel);
    const first = !this.#local.channels().includes(channel);
    const off = this.#local.add(channel, handler);
    if (!this.#client) await this.#connect().catch(() => undefined);
    // A second LISTEN of a channel is harmless: no need to know whether a connect in flight saw it.
    if (first && this.#client) {
      await this.#client.query(`LISTEN ${pg.escapeIdentifier(name)}`).catch(() => {
        // The connection's error handler reconnects and listens on every channel again.
      });
    }
    if (this.#local.listening) handler.listening?.(true);
    return async () => {
      const last = off();
      if (last && this.#client && !this.#connecting) {
        await this.#client.query(`UNLISTEN ${pg.escapeIdentifier(name)}`).catch(() => undefined);
      }
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    clearInterval(this.#probe);
    const client = this.#client;
    this.#client = undefined;
    if (client) await endWithin(client, CLOSE_WAIT_MS);
  }

  #connect(): Promise<void> {
    if (this.#connecting) return this.#connecting;
    if (this.#closed) return Promise.resolve();
    const attempt = (async () => {
      const client = new pg.Client({
        connectionString: this.#connectionString,
        application_name: this.applicationName,
      });
      client.on("error", () => this.#lost(client));
      client.on("end", () => this.#lost(client));
      client.on("notification", (m) => {
        if (this.#client !== client || !m.channel.startsWith(this.#prefix)) return;
        this.#local.deliver(m.channel.slice(this.#prefix.length), m.payload ?? "");
      });
      try {
        await client.connect();
        for (const channel of this.#local.channels()) {
          await client.query(`LISTEN ${pg.escapeIdentifier(this.pgChannel(channel))}`);
        }
      } catch (err) {
        client.removeAllListeners("end");
        await client.end().catch(() => undefined);
        this.#schedule();
        throw err;
      }
      if (this.#closed) {
        await client.end().catch(() => undefined);
        return;
      }
      this.#client = client;
      this.#attempt = 0;
      this.#startProbe(client);
      this.#local.setListening(true);
    })();
    this.#connecting = attempt;
    void attempt
      .finally(() => {
        if (this.#connecting === attempt) this.#connecting = undefined;
      })
      .catch(() => undefined);
    return attempt;
  }

  #startProbe(client: pg.Client): void {
    clearInterval(this.#probe);
    let inFlight = false;
    this.#probe = setInterval(() => {
      if (this.#client !== client) return;
      if (inFlight) {
        this.#lost(client); // the last probe never came back: nothing else would either
        return;
      }
      inFlight = true;
      client.query("SELECT 1").then(
        () => {
          inFlight = false;
        },
        () => this.#lost(client),
      );
    }, this.#probeMs);
    this.#probe.unref();
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    clearInterval(this.#probe);
    this.#local.setListening(false);
    void endWithin(client, CLOSE_WAIT_MS);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#closed || this.#retry) return;
    const ceiling = Math.min(BACKOFF_MS.max, BACKOFF_MS.initial * 2 ** Math.min(this.#attempt, 16));
    this.#attempt++;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#connect().catch(() => undefined);
    }, ceiling);
    this.#retry.unref();
  }
}

/** Ends a client, giving up after `ms` (a stalled link never acknowledges the end). */
async function endWithin(client: pg.Client, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    client.end().catch(() => undefined),
    new Promise<void>((r) => {
      timer = setTimeout(r, ms);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}
