// Requests per session (docs/web-api.md "Limits"): one token bucket per session credential, so
// one client holding a session cannot keep auth busy. Every route that takes a session counts
// (routes whose schema declares the session security, and the terminal upgrade), before the body
// is read and before auth is asked; an empty bucket answers 429 `limit_exceeded` with Retry-After.
// @fastify/rate-limit only counts fixed windows, which let twice the budget through at a window
// edge; a bucket is a few lines. Buckets live in this replica's memory, keyed by a hash of the
// credential (the secret itself is not kept), at most `maxSessions` of them.
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import fp from "fastify-plugin";
import { LimitExceededError } from "../../../core/errors.ts";
import { ErrorBody } from "../schemas.ts";
import { requestCredential, requestDigest } from "./session.ts";

declare module "fastify" {
  interface FastifyInstance {
    /** Hook: 429 once the request's session credential has spent its budget; no credential passes. */
    limitSessionRequests: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
}

export interface TokenBucketOptions {
  perSecond: number;
  burst: number;
  /** keys tracked at once; the least recently used is forgotten first */
  maxKeys: number;
  now?: () => number;
}

export class TokenBuckets {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  /** the key last taken from: the Map's last entry */
  #newest: string | undefined;
  readonly #o: Required<TokenBucketOptions>;

  constructor(o: TokenBucketOptions) {
    this.#o = { now: () => performance.now(), ...o };
  }

  /** Takes one token for `key`: 0 when granted, else the whole seconds until one is there. */
  take(key: string): number {
    const { perSecond, burst, maxKeys } = this.#o;
    const now = this.#o.now();
    let b = this.#buckets.get(key);
    let tokens = burst;
    if (b !== undefined) {
      tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * perSecond);
      // Map order is recency order: moved to the end, unless it is there already (a delete and
      // set on a small Map rehashes it every few calls).
      if (key !== this.#newest) {
        this.#buckets.delete(key);
        this.#buckets.set(key, b);
      }
    } else {
      if (this.#buckets.size >= maxKeys) {
        const oldest = this.#buckets.keys().next().value;
        if (oldest !== undefined) this.#buckets.delete(oldest);
      }
      b = { tokens, at: now };
      this.#buckets.set(key, b);
    }
    this.#newest = key;
    const granted = tokens >= 1;
    b.tokens = granted ? tokens - 1 : tokens;
    b.at = now;
    return granted ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSecond));
  }

  get size(): number {
    return this.#buckets.size;
  }
}

export interface SessionRateLimitOptions {
  perSecond: number;
  burst: number;
  maxSessions?: number;
}

export const sessionRateLimitPlugin = fp(
  async (app: FastifyInstance, opts: SessionRateLimitOptions) => {
    const buckets = new TokenBuckets({
      perSecond: opts.perSecond,
      burst: opts.burst,
      maxKeys: opts.maxSessions ?? 100_000,
    });

    function limit(request: FastifyRequest, reply: FastifyReply): void {
      // A malformed credential is the session plugin's 401 to give; it is simply not counted here.
      let credential: ReturnType<typeof requestCredential>;
      try {
        credential = requestCredential(request);
      } catch {
        return;
      }
      if (credential === undefined) return;
      // The digest, not the credential: the session check reuses it (one hash per request).
      const wait = buckets.take(requestDigest(request, credential));
      if (wait === 0) return;
      reply.header("retry-after", String(wait));
      throw new LimitExceededError("too many requests for this session, slow down");
    }
    app.decorate("limitSessionRequests", async (request: FastifyRequest, reply: FastifyReply) =>
      limit(request, reply),
    );
    // On routes, a callback, not an async function: no promise per request.
    const hook: onRequestHookHandler = (request, reply, done) => {
      try {
        limit(request, reply);
      } catch (err) {
        done(err as Error);
        return;
      }
      done();
    };

    // Routes taking a session count on arrival and declare the 429 in the OpenAPI document.
    app.addHook("onRoute", (route) => {
      const schema = route.schema;
      if (!Array.isArray(schema?.security) || schema.security.length === 0) return;
      const prior = route.onRequest;
      route.onRequest = prior === undefined ? [hook] : [hook, ...(Array.isArray(prior) ? prior : [prior])];
      const response = (schema.response ?? {}) as Record<string, unknown>;
      if (!("429" in response)) route.schema = { ...schema, response: { ...response, 429: ErrorBody } };
    });
  },
  { name: "svc-session-rate-limit", dependencies: ["svc-session"] },
);
