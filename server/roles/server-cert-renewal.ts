// Keeps a long-running TLS server's own certificate fresh: re-issued once half of its validity
// has passed, then handed to `apply` (which swaps it into the live server for new connections).
// The decision (`due`, `check`) reads only the injected clock; the timer merely calls `check`.
import { X509Certificate } from "node:crypto";
import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../logger.ts";
import type { TlsIdentity } from "../wiring.ts";

/** When a certificate should be replaced: half-way between notBefore and notAfter (ms). */
export function renewalTime(certPem: string): number {
  const cert = new X509Certificate(certPem);
  const from = Date.parse(cert.validFrom);
  const to = Date.parse(cert.validTo);
  if (!Number.isFinite(from) || !Number.isFinite(to) || to <= from)
    throw new Error("certificate has no usable validity period");
  return from + (to - from) / 2;
}

export interface ServerCertRenewerOptions {
  /** The certificate the server was started with. */
  current: TlsIdentity;
  /** Issues a fresh certificate (same names). */
  issue(): Promise<TlsIdentity>;
  /** Puts a fresh certificate into service. */
  apply(identity: TlsIdentity): void;
  clock: Clock;
  logger: Logger;
  /** Longest sleep between checks, so a clock jump (suspend, NTP step) is noticed (default 1 h). */
  maxCheckIntervalMs?: number;
}

export type RenewalOutcome = "kept" | "renewed";

export class ServerCertRenewer {
  readonly #o: ServerCertRenewerOptions;
  #renewAt: number;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #failures = 0;

  constructor(o: ServerCertRenewerOptions) {
    this.#o = o;
    this.#renewAt = renewalTime(o.current.certPem);
  }

  /** When the certificate in service is due (ms since the epoch). */
  get renewAt(): number {
    return this.#renewAt;
  }

  due(): boolean {
    return this.#o.clock.now().getTime() >= this.#renewAt;
  }

  /** Re-issues and applies the certificate when it is due; otherwise does nothing. */
  async check(): Promise<RenewalOutcome> {
    if (!this.due()) return "kept";
    const fresh = await this.#o.issue();
    const renewAt = renewalTime(fresh.certPem);
    this.#o.apply(fresh);
    this.#renewAt = renewAt;
    return "renewed";
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#schedule(this.#delay());
  }

  stop(): void {
    this.#running = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #delay(): number {
    const max = this.#o.maxCheckIntervalMs ?? 60 * 60_000;
    return Math.max(1_000, Math.min(max, this.#renewAt - this.#o.clock.now().getTime()));
  }

  #schedule(ms: number): void {
    if (!this.#running) return;
    this.#timer = setTimeout(() => void this.#tick(), ms);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    try {
      const outcome = await this.check();
      this.#failures = 0;
      if (outcome === "renewed")
        this.#o.logger.info(
          { renewAt: new Date(this.#renewAt).toISOString() },
          "TLS server certificate renewed",
        );
      this.#schedule(this.#delay());
    } catch (err) {
      // The old certificate is still valid for the other half of its life: retry with backoff.
      this.#failures++;
      const delay = Math.min(60_000, 1_000 * 2 ** Math.min(this.#failures - 1, 10));
      this.#o.logger.warn({ err, retryInMs: delay }, "TLS server certificate not renewed");
      this.#schedule(delay);
    }
  }
}
