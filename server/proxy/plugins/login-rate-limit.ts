// Login and MFA attempts are limited per client address, and the MFA steps also per pending login
// (its mfa token / challenge id); either one exceeding refuses with 429 + Retry-After. Counters
// live in this replica's memory: the proxy is stateless by design. Attempts per login name are not
// counted here: a per-name limit anyone can spend would shut the user out from everywhere; auth's
// login throttling counts names cluster-wide and exempts addresses the user is known from
// (docs/auth.md, "Login throttling").
import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { LimitExceededError } from "../../../core/errors.ts";

declare module "fastify" {
  interface FastifyInstance {
    /** preHandler for login-like routes; run after body validation (the username is in the body). */
    limitLoginAttempts: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
}

export interface LoginRateLimitOptions {
  perAddress: number;
  /** per pending MFA login (mfa token / challenge id) */
  perUsername: number;
  windowMs: number;
}

/**
 * Which pending login an MFA step is about: its mfa token / challenge id (secrets of that login,
 * so an attacker cannot spend another user's budget).
 */
function usernameOf(request: FastifyRequest): string | undefined {
  const body = request.body;
  if (typeof body !== "object" || body === null) return undefined;
  const { mfa_token, challenge_id } = body as { mfa_token?: unknown; challenge_id?: unknown };
  if (typeof mfa_token === "string") return `mfa:${mfa_token}`;
  if (typeof challenge_id === "string") return `challenge:${challenge_id}`;
  return undefined;
}

export const loginRateLimitPlugin = fp(
  async (app: FastifyInstance, opts: LoginRateLimitOptions) => {
    await app.register(rateLimit, { global: false });
    const byAddress = app.createRateLimit({
      max: opts.perAddress,
      timeWindow: opts.windowMs,
      keyGenerator: (req) => `addr:${req.ip}`,
    });
    const byUsername = app.createRateLimit({
      max: opts.perUsername,
      timeWindow: opts.windowMs,
      keyGenerator: (req) => `user:${usernameOf(req) ?? ""}`,
    });

    app.decorate("limitLoginAttempts", async (request: FastifyRequest, reply: FastifyReply) => {
      const checks = [await byAddress(request)];
      if (usernameOf(request) !== undefined) checks.push(await byUsername(request));
      const exceeded = checks.filter((c) => !c.isAllowed && c.isExceeded);
      if (exceeded.length === 0) return;
      const retryAfter = Math.max(...exceeded.map((c) => (c.isAllowed ? 0 : c.ttlInSeconds)), 1);
      reply.header("retry-after", String(retryAfter));
      throw new LimitExceededError("too many login attempts, try again later");
    });
  },
  { name: "svc-login-rate-limit" },
);

/**
 * Copies the wait auth asks for (its login throttling's `retry-after`) onto the reply as
 * Retry-After, then answers the error for the error handler to send.
 */
export function withRetryAfter(reply: FastifyReply, err: unknown): unknown {
  if (err instanceof LimitExceededError && err.retryAfterSeconds !== undefined)
    reply.header("retry-after", String(err.retryAfterSeconds));
  return err;
}
