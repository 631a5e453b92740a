// The one place where typed core errors become gRPC statuses. Anything that is not a typed core
// error becomes INTERNAL with a fixed message: internals never reach a client.
import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { type ErrorCode, isSvcError, LimitExceededError } from "../../core/errors.ts";

const CODES: Record<ErrorCode, status> = {
  not_found: status.NOT_FOUND,
  access_denied: status.PERMISSION_DENIED,
  not_authenticated: status.UNAUTHENTICATED,
  already_exists: status.ALREADY_EXISTS,
  bad_parameter: status.INVALID_ARGUMENT,
  compare_failed: status.ABORTED,
  limit_exceeded: status.RESOURCE_EXHAUSTED,
  precondition_failed: status.FAILED_PRECONDITION,
  unavailable: status.UNAVAILABLE,
  not_implemented: status.UNIMPLEMENTED,
  internal: status.INTERNAL,
};

export const INTERNAL_MESSAGE = "internal error";

/** A partial ServiceError grpc-js sends as the call status. */
export interface GrpcStatusError {
  code: status;
  details: string;
  metadata: Metadata;
}

export function toGrpcError(err: unknown): GrpcStatusError {
  if (isSvcError(err) && err.code !== "internal") {
    const metadata = new Metadata();
    if (err instanceof LimitExceededError && err.retryAfterSeconds !== undefined)
      metadata.set("retry-after", String(err.retryAfterSeconds));
    return { code: CODES[err.code], details: err.message, metadata };
  }
  return { code: status.INTERNAL, details: INTERNAL_MESSAGE, metadata: new Metadata() };
}

/** Reverse mapping for clients (proxy, CLIs): a gRPC error back to its core error code. */
export function errorCodeOfGrpc(err: Pick<ServiceError, "code">): ErrorCode {
  for (const [code, grpcCode] of Object.entries(CODES) as [ErrorCode, status][]) {
    if (grpcCode === err.code && code !== "internal") return code;
  }
  return "internal";
}
