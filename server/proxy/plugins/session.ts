// Resolves the caller's session through `app.authApi.getSession` on every request that needs
// one, and enforces CSRF proof for cookie-authenticated state-changing requests. The roles wire
// that call through the session cache (session-cache.ts, docs/proxy-cache.md): answered from
// memory while the WatchSessions stream is live, by auth otherwise; a logout anywhere reaches
// this proxy through the stream, and one through this proxy drops its entry at once.
import cookie from "@fastify/cookie";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { AccessDeniedError, NotAuthenticatedError } from "../../../core/errors.ts";
import type { SessionInfo } from "../auth-client.ts";
import { type Credential, CSRF_HEADER, checkCsrf, readCredential } from "../credentials.ts";
import { sessionHash, withSessionDigest } from "../session-cache.ts";

export interface AuthedSession extends Credential {
  info: SessionInfo;
  /** sessionHash of the id, computed once for the request */
  digest: string;
}

/** A request's credential, read once per request, and its digest once asked for. */
interface RequestCredential {
  credential: Credential;
  digest: string | undefined;
}

declare module "fastify" {
  interface FastifyInstance {
    /** preHandler: 401 without a live session; CSRF check for cookie + unsafe method. */
    requireSession: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /**
     * The credential a request carries, CSRF-checked like requireSession, without asking auth
     * whether the session still lives (logout clears the cookies of an expired one too).
     * undefined: none; throws 401 for a malformed one, 403 for a failed CSRF check.
     */
    checkedCredential: (request: FastifyRequest) => Credential | undefined;
  }
  interface FastifyRequest {
    svcSession: AuthedSession | null;
    /** requestCredential's answer, kept for the request's later checks */
    svcCredential: RequestCredential | null;
  }
}

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/** The session a route guarded by requireSession runs with. */
export function sessionOf(request: FastifyRequest): AuthedSession {
  if (request.svcSession === null) throw new NotAuthenticatedError();
  return request.svcSession;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The credential the request carries (undefined: none; throws 401 for a malformed one), read
 * from its headers once: the session rate limit and the session check both ask.
 */
export function requestCredential(request: FastifyRequest): Credential | undefined {
  if (request.svcCredential !== null) return request.svcCredential.credential;
  const credential = readCredential(header(request, "authorization"), request.cookies);
  if (credential !== undefined) request.svcCredential = { credential, digest: undefined };
  return credential;
}

/** sessionHash of the request's session id, computed once per request. */
export function requestDigest(request: FastifyRequest, credential: Credential): string {
  const read = request.svcCredential;
  if (read === null || read.credential !== credential) return sessionHash(credential.sessionId);
  read.digest ??= sessionHash(credential.sessionId);
  return read.digest;
}

/**
 * Calls `call` (an AuthApi call for this session) with the request's digest handed down, so the
 * layers in front of auth (inventory copy, lock guard, session cache) do not hash the id again.
 */
export function withRequestDigest<T>(session: AuthedSession, call: () => T): T {
  return withSessionDigest(session.sessionId, session.digest, call);
}

export const sessionPlugin = fp(
  async (app: FastifyInstance) => {
    await app.register(cookie);
    app.decorateRequest("svcSession", null);
    app.decorateRequest("svcCredential", null);
    const publicOrigin = new URL(app.proxyConfig.publicUrl).origin;

    function checkedCredential(request: FastifyRequest): Credential | undefined {
      const credential = requestCredential(request);
      if (credential === undefined) return undefined;
      if (credential.via === "cookie" && !safeMethods.has(request.method)) {
        const verdict = checkCsrf({
          sessionId: credential.sessionId,
          publicOrigin,
          origin: header(request, "origin"),
          referer: header(request, "referer"),
          headerToken: header(request, CSRF_HEADER),
        });
        if (!verdict.ok) throw new AccessDeniedError(`CSRF check failed: ${verdict.reason}`);
      }
      return credential;
    }
    app.decorate("checkedCredential", checkedCredential);

    app.decorate("requireSession", async (request: FastifyRequest, _reply: FastifyReply) => {
      const credential = checkedCredential(request);
      if (credential === undefined) throw new NotAuthenticatedError();
      const digest = requestDigest(request, credential);
      const info = await withSessionDigest(credential.sessionId, digest, () =>
        app.authApi.getSession(credential.sessionId),
      );
      request.svcSession = { ...credential, info, digest };
    });
  },
  { name: "svc-session", dependencies: ["svc-deps"] },
);
