// Client side of svc.v1.AuthService for the proxy, agents, bots and CLIs: a typed client over
// TLS (optionally with a host-CA client certificate), per-call credentials, a promise wrapper for
// unary calls, and gRPC errors turned back into typed core errors.
import {
  type CallOptions,
  type ClientUnaryCall,
  Metadata,
  type requestCallback,
  type ServiceError,
} from "@grpc/grpc-js";
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
import { AuthServiceClientConstructor, CLIENT_MESSAGE_LIMITS } from "./proto.ts";
import { type AuthClientTlsOptions, authClientCredentials } from "./tls.ts";

export type { AuthServiceClient };

export interface AuthClientOptions extends AuthClientTlsOptions {
  /** "host:port" of auth. */
  address: string;
  /** TLS server name to verify (the DNS name in auth's certificate) when it differs from the host. */
  serverName?: string;
}

/** A typed client; `client.close()` when done. */
export function createAuthClient(opts: AuthClientOptions): AuthServiceClient {
  // channelz off: nobody reads it, and its per-call bookkeeping is a visible share of a small call.
  // Reconnect backoff capped at 5 s (grpc-js defaults to 120 s): after auth restarts, callers
  // should find it again within seconds, not minutes.
  const options: Record<string, string | number> = {
    "grpc.enable_channelz": 0,
    "grpc.initial_reconnect_backoff_ms": 250,
    "grpc.max_reconnect_backoff_ms": 5_000,
    ...CLIENT_MESSAGE_LIMITS,
  };
  if (opts.serverName) options["grpc.ssl_target_name_override"] = opts.serverName;
  return new AuthServiceClientConstructor(opts.address, authClientCredentials(opts), options);
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
