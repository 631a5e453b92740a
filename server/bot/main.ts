// `svcd bot`: redeems a bootstrap token once (BootstrapAgentIdentity), then keeps its credentials
// fresh (RenewAgentIdentity) at a fraction of their lifetime, a little earlier by a random jitter,
// with capped exponential backoff while auth cannot be reached. Every renewal rotates both keys.
// The state needed to renew is saved BEFORE the outputs, in one atomic rename: auth has already
// moved to the new generation, so losing the new renewal credential would strand the bot.
// A refusal that retrying cannot fix (locked, unknown credential, lost race) ends the run.
// The new keys of a renewal are saved before it is sent and reused by every retry of it (also
// after a restart): when auth committed a renewal but its answer was lost, the retry with the
// same keys gets that generation issued again, where other keys would look like a stolen copy.

import { generateSshKeyPair } from "../../core/certs/ssh-keys.ts";
import { generateEcdsaP256, privateKeyToPem } from "../../core/certs/x509.ts";
import { type Clock, systemClock } from "../../core/clock.ts";
import { BadParameterError, isSvcError, type SvcError } from "../../core/errors.ts";
import { backoffDelayMs, renewalDelayMs } from "../../core/identity/schedule.ts";
import type { AgentIdentityCredentials__Output } from "../../proto/generated/svc/v1/AgentIdentityCredentials.ts";
import { authRouteOf } from "../agent/auth-target.ts";
import { firstContactCa } from "../agent/join.ts";
import { agentMetadata, callUnary, createAuthClient } from "../auth/client.ts";
import type { AuthRoute } from "../auth/via-proxy.ts";
import {
  type BotKeys,
  type BotStateFile,
  prepareFolder,
  readState,
  writeOutputs,
  writeState,
} from "./files.ts";

/** The part of a pino logger the bot uses. */
export interface BotLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface BotOptions {
  /** "host:port" of auth (or proxyAddress) */
  authAddress?: string;
  /** the proxy's public "host:port": auth is reached through it (server/agent/auth-target.ts) */
  proxyAddress?: string;
  /**
   * First contact only (later the folder holds the host CA): how to trust auth, one of the host
   * CA PEM(s), a "sha256:<hex>" pin of the host CA, or a PEM file.
   */
  hostCaPems?: readonly string[];
  caPin?: string;
  caFile?: string;
  /** TLS name in auth's certificate when it differs from the address host (with authAddress) */
  serverName?: string;
  /** bootstrap token "<name>.<secret>"; not needed when the folder already holds a bot */
  token?: string;
  /** output folder (created 0700) */
  outDir: string;
  logger: BotLogger;
  clock?: Clock;
  /** stops the bot (resolves runBot) */
  signal?: AbortSignal;
  /** random share taken off the renewal point; default 0.1 */
  jitter?: number;
  /** retry delays while auth is unreachable; default 1 s doubling up to 60 s */
  backoff?: { baseMs?: number; maxMs?: number };
  /** per-call deadline; default 15 s */
  callTimeoutMs?: number;
  /** called after every bootstrap/renewal has been written (observability, tests) */
  onCredentials?: (c: { generation: number; expiresAtMs: number }) => void;
}

/** Refusals that a retry cannot fix. */
const PERMANENT = new Set([
  "access_denied",
  "not_authenticated",
  "bad_parameter",
  "compare_failed",
  "not_found",
]);

function permanent(err: unknown): err is SvcError {
  return isSvcError(err) && PERMANENT.has(err.code);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

function freshKeys(name: string): BotKeys {
  const ssh = generateSshKeyPair("ed25519", { comment: `bot:${name}` });
  const tls = generateEcdsaP256();
  return {
    sshPrivateOpenSsh: ssh.privateOpenSsh,
    sshPublicLine: ssh.publicLine,
    tlsKeyPem: privateKeyToPem(tls.privateKey),
    tlsPublicPem: tls.publicKey.export({ format: "pem", type: "spki" }).toString(),
  };
}

class Bot {
  readonly #o: BotOptions;
  readonly #clock: Clock;
  #route: AuthRoute | undefined;

  constructor(o: BotOptions) {
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
  }

  /** Learned once per run (through the proxy: one ping, retried with the calls while it fails). */
  async #authRoute(): Promise<AuthRoute> {
    if (this.#route) return this.#route;
    const o = this.#o;
    try {
      this.#route = await authRouteOf({
        ...(o.authAddress ? { authAddress: o.authAddress } : {}),
        ...(o.serverName ? { authServerName: o.serverName } : {}),
        ...(o.proxyAddress ? { proxyAddress: o.proxyAddress } : {}),
      });
    } catch (err) {
      // A proxy that answers but does not route to auth will not start to by retrying.
      if (isSvcError(err) && err.code === "precondition_failed")
        throw new BadParameterError(err.message, { cause: err });
      throw err;
    }
    return this.#route;
  }

  async #client(caPems: readonly string[], tls?: { certPem: string; keyPem: string }) {
    const route = await this.#authRoute();
    return createAuthClient({
      address: route.address,
      caPems,
      ...(route.serverName ? { serverName: route.serverName } : {}),
      ...(tls ?? {}),
    });
  }

  #deadline() {
    return { deadline: Date.now() + (this.#o.callTimeoutMs ?? 15_000) };
  }

  async #save(
    creds: AgentIdentityCredentials__Output,
    keys: BotKeys,
    caPems: readonly string[],
  ): Promise<BotStateFile> {
    const state: BotStateFile = {
      version: 1,
      name: creds.name,
      generation: creds.generation,
      renewalToken: creds.renewal_token,
      tlsKeyPem: keys.tlsKeyPem,
      tlsCertificatePem: creds.tls_certificate_pem,
      hostCaPems: creds.host_ca_pems.length > 0 ? creds.host_ca_pems : [...caPems],
      issuedAtMs: this.#clock.now().getTime(),
      expiresAtMs: creds.expires_unix_ms,
      renewAfterMs: creds.renew_after_unix_ms,
    };
    await writeState(this.#o.outDir, state);
    await writeOutputs(this.#o.outDir, {
      sshPrivateOpenSsh: keys.sshPrivateOpenSsh,
      sshPublicLine: keys.sshPublicLine,
      sshCertificate: creds.ssh_certificate,
      tlsKeyPem: keys.tlsKeyPem,
      tlsCertificatePem: creds.tls_certificate_pem,
      hostCaPems: state.hostCaPems,
      hostCaSshPublicKeys: creds.host_ca_ssh_public_keys,
    });
    this.#o.onCredentials?.({ generation: state.generation, expiresAtMs: state.expiresAtMs });
    return state;
  }

  async #firstContactCa(): Promise<string[]> {
    const o = this.#o;
    if (o.hostCaPems && o.hostCaPems.length > 0) return [...o.hostCaPems];
    const route = await this.#authRoute();
    return firstContactCa({
      authAddress: route.address,
      ...(route.serverName ? { authServerName: route.serverName } : {}),
      ...(o.caPin ? { caPin: o.caPin } : {}),
      ...(o.caFile ? { caFile: o.caFile } : {}),
    });
  }

  async bootstrap(): Promise<BotStateFile> {
    const token = this.#o.token;
    if (!token)
      throw new BadParameterError("no bot credentials in the folder yet: a bootstrap token is required");
    const caPems = await this.#firstContactCa();
    const keys = freshKeys("bootstrap");
    const client = await this.#client(caPems);
    try {
      const creds = await callUnary(
        client,
        "BootstrapAgentIdentity",
        { token, ssh_public_key: keys.sshPublicLine, tls_public_key_pem: keys.tlsPublicPem },
        undefined,
        this.#deadline(),
      );
      const state = await this.#save(creds, keys, caPems);
      this.#o.logger.info({ bot: state.name, generation: state.generation }, "bot bootstrapped");
      return state;
    } finally {
      client.close();
    }
  }

  /** The keys of the next renewal: saved ones (a retry) or new ones, saved before use. */
  async nextKeys(state: BotStateFile): Promise<BotStateFile & { pendingKeys: BotKeys }> {
    if (state.pendingKeys) return { ...state, pendingKeys: state.pendingKeys };
    const next = { ...state, pendingKeys: freshKeys(state.name) };
    await writeState(this.#o.outDir, next);
    return next;
  }

  async renew(state: BotStateFile & { pendingKeys: BotKeys }): Promise<BotStateFile> {
    const keys = state.pendingKeys;
    const client = await this.#client(state.hostCaPems, {
      certPem: state.tlsCertificatePem,
      keyPem: state.tlsKeyPem,
    });
    try {
      const creds = await callUnary(
        client,
        "RenewAgentIdentity",
        {
          name: state.name,
          renewal_token: state.renewalToken,
          generation: state.generation,
          ssh_public_key: keys.sshPublicLine,
          tls_public_key_pem: keys.tlsPublicPem,
        },
        agentMetadata(state.name),
        this.#deadline(),
      );
      const next = await this.#save(creds, keys, state.hostCaPems);
      this.#o.logger.info({ bot: next.name, generation: next.generation }, "bot credentials renewed");
      return next;
    } finally {
      client.close();
    }
  }

  /** Retries `fn` with capped backoff until it succeeds, fails permanently, or the bot stops. */
  async retrying<T>(what: string, fn: () => Promise<T>): Promise<T | undefined> {
    const signal = this.#o.signal;
    for (let attempt = 0; !signal?.aborted; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (permanent(err) || !isSvcError(err)) throw err;
        const delay = backoffDelayMs(attempt, this.#o.backoff ?? {});
        this.#o.logger.warn({ err: err.message, attempt, retryInMs: delay }, `${what} failed; retrying`);
        await sleep(delay, signal);
      }
    }
    return undefined;
  }

  async run(): Promise<void> {
    const signal = this.#o.signal;
    await prepareFolder(this.#o.outDir);
    let state =
      (await readState(this.#o.outDir)) ?? (await this.retrying("bootstrap", () => this.bootstrap()));
    while (state && !signal?.aborted) {
      const life = Math.max(1, state.expiresAtMs - state.issuedAtMs);
      const delay = renewalDelayMs({
        issuedAtMs: state.issuedAtMs,
        expiresAtMs: state.expiresAtMs,
        nowMs: this.#clock.now().getTime(),
        fraction: (state.renewAfterMs - state.issuedAtMs) / life,
        jitter: this.#o.jitter ?? 0.1,
      });
      await sleep(delay, signal);
      if (signal?.aborted) break;
      const current = await this.nextKeys(state);
      state = await this.retrying("renewal", () => this.renew(current));
    }
  }
}

/** Runs the bot until `signal` aborts; rejects on a refusal that retrying cannot fix. */
export async function runBot(opts: BotOptions): Promise<void> {
  await new Bot(opts).run();
}
