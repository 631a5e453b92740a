// Client side of svc.v1.AuthService for the proxy, agents, bots and CLIs: a typed client over
// TLS (optionally with a host-CA client certificate), per-call credentials, a promise wrapper for
// unary calls, and gRPC errors turned back into typed core errors.
import { isIP } from "node:net";
import {
  type CallOptions,
  type ChannelOptions,
  type Client,
  type ClientUnaryCall,
  Metadata,
  makeGenericClientConstructor,
  type requestCallback,
  type ServiceError,
} from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";
import {
  AccessDeniedError,
  AlreadyExistsError,
  BadParameterError,
  SvcError as BaseError,
  CompareFailedError,
  LimitExceededError,
  NotAuthenticatedError,
  NotFoundError,
  NotImplementedError,
  PreconditionFailedError,
  type SvcError,
  UnavailableError,
} from "../../core/errors.ts";
import type { AuthServiceClient } from "../../proto/generated/svc/v1/AuthService.ts";
import { errorCodeOfGrpc } from "./errors.ts";
import { AUTH_SERVICE_NAME, AuthServiceClientConstructor, CLIENT_MESSAGE_LIMITS } from "./proto.ts";
import { type AuthClientTlsOptions, authClientCredentials } from "./tls.ts";

export type { AuthServiceClient };

export interface AuthClientOptions extends AuthClientTlsOptions {
  /**
   * "host:port" of auth, or several replicas: "ip:port,ip:port" (IP literals of one family). A
   * single DNS name that resolves to several addresses (a headless Service) reaches them all too.
   */
  address: string;
  /** TLS server name to verify (the DNS name in auth's certificate) when it differs from the host. */
  serverName?: string;
}

/**
 * Reads that change nothing: retried on UNAVAILABLE (auth restarting, a replica killed mid-call)
 * on whichever replica is ready, within the caller's deadline. Other calls are not listed: grpc-js
 * still retries any call once, transparently, when it never reached auth's code (not sent, or
 * refused by a draining server); see RETRIED_ONCE for the two that get one more.
 */
export const RETRIED_READS = [
  "GetSession",
  "ListNodes",
  "ListUsers",
  "ListRoles",
  "ListRecordings",
  "SearchAuditEvents",
  "ListWebAuthnDevices",
  "GetPublicKeys",
  "GetClusterInfo",
  "ListAgentIdentities",
  "ListJoinTokens",
  "GetJoinTokenUsage",
  "AuthorizeNodeLogin",
  "AuthorizeSshLogin",
  "CheckNodeRegistered",
  "ListLocks",
  "ExportKrl",
  "ListCertAuthorities",
] as const satisfies readonly UnaryRpc[];

/**
 * A login and a certificate request: retried once on UNAVAILABLE before any answer (the replica
 * died or the connection broke mid-call). The first attempt may have reached auth, so the worst
 * case is an unused session or a second certificate for the caller's own key (each audited);
 * both are harmless, unlike a user who cannot log in or open a terminal while auth restarts.
 * Single-use steps (WebAuthn finish, password reset, token use) are never retried this way.
 */
export const RETRIED_ONCE = ["AuthenticateLocal", "IssueUserCerts"] as const satisfies readonly UnaryRpc[];

/**
 * round_robin over every address the target resolves to (each replica gets calls, and a replica
 * that drains or dies is skipped while the others serve); reads retried as above. The backoff
 * stays short: the deadline, not the attempt count, bounds how long a caller waits.
 */
export const AUTH_SERVICE_CONFIG = JSON.stringify({
  loadBalancingConfig: [{ round_robin: {} }],
  methodConfig: [
    {
      name: [
        ...RETRIED_READS.map((method) => ({ service: AUTH_SERVICE_NAME, method })),
        { service: "grpc.health.v1.Health", method: "Check" },
      ],
      retryPolicy: {
        maxAttempts: 5,
        initialBackoff: "0.1s",
        maxBackoff: "1s",
        backoffMultiplier: 2,
        retryableStatusCodes: ["UNAVAILABLE"],
      },
    },
    {
      name: RETRIED_ONCE.map((method) => ({ service: AUTH_SERVICE_NAME, method })),
      retryPolicy: {
        maxAttempts: 2,
        initialBackoff: "0.1s",
        maxBackoff: "0.5s",
        backoffMultiplier: 2,
        retryableStatusCodes: ["UNAVAILABLE"],
      },
    },
  ],
});

/**
 * The gRPC target for an auth address: "host:port" as is (the DNS resolver), a list of IP
 * literals as grpc-js's static "ipv4:"/"ipv6:" target. A list of names would need a resolver of
 * our own; one DNS name with several records does the same job, so lists must be IPs.
 */
export function authTarget(address: string): string {
  const parts = address
    .split(",")
    .map((a) => a.trim())
    .filter((a) => a !== "");
  const [first] = parts;
  if (first === undefined) throw new BadParameterError("no auth address given");
  if (parts.length === 1) return first;
  const families = new Set(
    parts.map((p) => {
      const i = p.lastIndexOf(":");
      return isIP(p.slice(0, i).replace(/^\[|\]$/g, ""));
    }),
  );
  const [family] = [...families];
  if (families.size !== 1 || (family !== 4 && family !== 6)) {
    throw new BadParameterError(
      `several auth addresses must all be IPv4 or all IPv6 literals (got ${JSON.stringify(address)}); for names, give one DNS name that resolves to every replica`,
    );
  }
  return `ipv${family}:${parts.join(",")}`;
}

/** The first "host:port" of an auth address list (for things that dial one socket). */
export function firstAuthAddress(address: string): string {
  return address.split(",")[0]?.trim() ?? address;
}

/** A typed client; `client.close()` when done. */
export function createAuthClient(opts: AuthClientOptions): AuthServiceClient {
  return new AuthServiceClientConstructor(
    authTarget(opts.address),
    authClientCredentials(opts),
    authChannelOptions(opts.serverName),
  );
}

function authChannelOptions(serverName: string | undefined): ChannelOptions {
  // channelz off: nobody reads it, and its per-call bookkeeping is a visible share of a small call.
  // Reconnect backoff capped at 5 s (grpc-js defaults to 120 s): after auth restarts, callers
  // should find it again within seconds, not minutes.
  const options: ChannelOptions = {
    "grpc.enable_channelz": 0,
    "grpc.initial_reconnect_backoff_ms": 250,
    "grpc.max_reconnect_backoff_ms": 5_000,
    "grpc.service_config": AUTH_SERVICE_CONFIG,
    ...CLIENT_MESSAGE_LIMITS,
  };
  if (serverName) options["grpc.ssl_target_name_override"] = serverName;
  return options;
}

/**
 * One channel to auth for one identity, shared by every caller in the process (the proxy's web,
 * CLI, terminal, admin and tunnel wrappers, its trust, session and inventory streams): one TLS
 * connection per replica instead of one per wrapper. Replaced as a whole when the identity changes.
 */
export interface AuthConnection {
  readonly client: AuthServiceClient;
  /** Metadata for calls made as the service itself (x-agent-id); throws if it has no caller id. */
  metadata(): Metadata;
  /** The standard health check over the same channel; false when auth does not answer SERVING. */
  health(timeoutMs?: number): Promise<boolean>;
  /** Closes the channel (calls still running on it fail). */
  close(): void;
}

interface HealthClient extends Client {
  Check(
    req: { service: string },
    md: Metadata,
    opts: CallOptions,
    cb: requestCallback<{ status: string | number }>,
  ): ClientUnaryCall;
}

const HealthClientConstructor = makeGenericClientConstructor(healthService, "Health");

export function createAuthConnection(
  opts: AuthClientOptions & {
    /** who the service calls as ("proxy:<name>"), or why it cannot (then metadata() throws it) */
    callerId?: string | Error;
  },
): AuthConnection {
  const client = createAuthClient(opts);
  // The health client rides the same channel (channelOverride): no second connection.
  const health = new HealthClientConstructor(authTarget(opts.address), authClientCredentials(opts), {
    channelOverride: client.getChannel(),
  }) as unknown as HealthClient;
  const callerId = opts.callerId;
  return {
    client,
    metadata() {
      if (callerId === undefined) throw new BadParameterError("this auth connection has no caller id");
      if (callerId instanceof Error) throw callerId;
      return agentMetadata(callerId);
    },
    health(timeoutMs = 10_000) {
      return new Promise((resolve) => {
        health.Check(
          { service: "" },
          // Not wait-for-ready: readiness must say "not now" while no replica is reachable.
          new Metadata(),
          { deadline: Date.now() + timeoutMs },
          (err, res) => resolve(!err && (res?.status === "SERVING" || res?.status === 1)),
        );
      });
    },
    close() {
      client.close();
    },
  };
}

/** Call metadata for a user: `authorization: Bearer <session_id>`. */
export function userMetadata(sessionId: string): Metadata {
  const md = new Metadata();
  md.set("authorization", `Bearer ${sessionId}`);
  return md;
}

/** Call metadata for an agent / service: `x-agent-id` (the client certificate must match). */
export function agentMetadata(agentId: string): Metadata {
  const md = new Metadata();
  md.set("x-agent-id", agentId);
  return md;
}

/**
 * The same metadata, marked wait-for-ready: while the channel is reconnecting (auth or the proxy
 * restarting) the call waits for it, within its deadline, instead of failing at once. For service
 * callers (agents, proxies); interactive CLIs fail fast instead.
 */
export function waitForReady(md: Metadata): Metadata {
  md.setOptions({ waitForReady: true });
  return md;
}

// The generated client overloads each method; the last overload is (argument, callback), which is
// what these conditional types read the request and response types from.
type UnaryShape<Req, Res> = (argument: Req, callback: requestCallback<Res>) => ClientUnaryCall;
/** Names of the unary RPCs of the client (PascalCase, as in the .proto). */
export type UnaryRpc = {
  [K in keyof AuthServiceClient]: K extends `${Uppercase<string>}${string}`
    ? AuthServiceClient[K] extends UnaryShape<infer _Q, infer _R>
      ? K
      : never
    : never;
}[keyof AuthServiceClient];
export type RequestOf<K extends UnaryRpc> =
  AuthServiceClient[K] extends UnaryShape<infer Q, infer _R> ? Q : never;
export type ResponseOf<K extends UnaryRpc> =
  AuthServiceClient[K] extends UnaryShape<infer _Q, infer R> ? R : never;

/**
 * Promise form of a unary call, errors mapped to typed core errors:
 *   const s = await callUnary(client, "GetSession", {}, userMetadata(id));
 */
export function callUnary<K extends UnaryRpc>(
  client: AuthServiceClient,
  rpc: K,
  request: RequestOf<K>,
  metadata: Metadata = new Metadata(),
  options: CallOptions = { deadline: Date.now() + 30_000 },
): Promise<ResponseOf<K>> {
  const method = client[rpc] as unknown as (
    req: RequestOf<K>,
    md: Metadata,
    opts: CallOptions,
    cb: requestCallback<ResponseOf<K>>,
  ) => ClientUnaryCall;
  return new Promise((resolve, reject) => {
    method.call(client, request, metadata, options, (err, value) => {
      if (err) reject(fromGrpcError(err));
      else if (value === undefined) reject(new UnavailableError("empty answer from auth"));
      else resolve(value);
    });
  });
}

/** A gRPC error from auth as the typed core error it was on the server (message kept). */
export function fromGrpcError(err: ServiceError): SvcError {
  const msg = err.details || err.message;
  switch (errorCodeOfGrpc(err)) {
    case "not_found":
      return new NotFoundError(msg, { cause: err });
    case "access_denied":
      return new AccessDeniedError(msg, { cause: err });
    case "not_authenticated":
      return new NotAuthenticatedError(msg, { cause: err });
    case "already_exists":
      return new AlreadyExistsError(msg, { cause: err });
    case "bad_parameter":
      return new BadParameterError(msg, { cause: err });
    case "compare_failed":
      return new CompareFailedError(msg, { cause: err });
    case "limit_exceeded":
      return new LimitExceededError(msg, { cause: err });
    case "precondition_failed":
      return new PreconditionFailedError(msg, { cause: err });
    case "not_implemented":
      return new NotImplementedError(msg, { cause: err });
    case "unavailable":
      return new UnavailableError(msg, { cause: err });
    default:
      return new BaseError("internal", "internal error", { cause: err });
  }
}

/**
 * What a proxy-side wrapper is built from: the process's shared connection (production), or
 * options for a private one (tests and tools that build a single wrapper).
 */
export type AuthSource = AuthConnection | (AuthClientOptions & { timeoutMs?: number });

/** Default deadline of a proxy-side call to auth: long enough to ride out an auth restart. */
export const AUTH_CALL_TIMEOUT_MS = 10_000;

export function isAuthConnection(src: AuthSource): src is AuthConnection {
  return "client" in src && typeof (src as AuthConnection).metadata === "function";
}

/** The connection to use and whether the wrapper owns it (closes it on close()). */
export function connectionOf(
  src: AuthSource,
  callerId?: () => string | Error,
): { connection: AuthConnection; owned: boolean; timeoutMs: number } {
  if (isAuthConnection(src)) return { connection: src, owned: false, timeoutMs: AUTH_CALL_TIMEOUT_MS };
  const id = callerId?.();
  return {
    connection: createAuthConnection({ ...src, ...(id !== undefined ? { callerId: id } : {}) }),
    owned: true,
    timeoutMs: src.timeoutMs ?? AUTH_CALL_TIMEOUT_MS,
  };
}
