// Login and MFA attempts are limited per client address AND per username (both counted on every
// attempt; either one exceeding refuses with 429 + Retry-After). Counters live in this replica's
// memory: the proxy is stateless by design, and auth's own lockout is the cluster-wide guard.
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
  perUsername: number;
  windowMs: number;
}

/**
 * Whom a login-like request is about: the username (normalised so case does not dodge the limit)
 * or, on the MFA steps, the pending login's mfa token / challenge id, which stand for one user.
 */
function usernameOf(request: FastifyRequest): string | undefined {
  const body = request.body;
  if (typeof body !== "object" || body === null) return undefined;
  const { username, mfa_token, challenge_id } = body as {
    username?: unknown;
    mfa_token?: unknown;
    challenge_id?: unknown;
  };
  if (typeof username === "string") return `name:${username.trim().toLowerCase()}`;
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
