// Typed domain errors. Core code throws these; each edge (HTTP, gRPC, CLI) translates them to its
// own status codes in exactly one place, so no edge invents its own access rules or messages.

export type ErrorCode =
  | "not_found"
  | "access_denied"
  | "not_authenticated"
  | "already_exists"
  | "bad_parameter"
  | "compare_failed"
  | "limit_exceeded"
  | "precondition_failed"
  | "unavailable"
  | "not_implemented"
  | "internal";

export class SvcError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** The named thing does not exist (or the caller may not know that it does). */
export class NotFoundError extends SvcError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("not_found", message, options);
  }
}

/** The caller is known but not allowed to do this. */
export class AccessDeniedError extends SvcError {
  constructor(message = "access denied", options?: { cause?: unknown }) {
    super("access_denied", message, options);
  }
}

/** No valid credential was presented (or it expired, or was revoked). */
export class NotAuthenticatedError extends SvcError {
  constructor(message = "not authenticated", options?: { cause?: unknown }) {
    super("not_authenticated", message, options);
  }
}

export class AlreadyExistsError extends SvcError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("already_exists", message, options);
  }
}

/** The request itself is wrong: a malformed field, a weak key, an out-of-range value. */
export class BadParameterError extends SvcError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("bad_parameter", message, options);
  }
}

/** A compare-and-swap lost: the stored revision is not the expected one. */
export class CompareFailedError extends SvcError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("compare_failed", message, options);
  }
}

/** Rate limits, login throttling, quotas. */
export class LimitExceededError extends SvcError {
  /** When the caller may try again, if known (HTTP Retry-After, gRPC `retry-after` trailer). */
  readonly retryAfterSeconds: number | undefined;
  constructor(message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super("limit_exceeded", message, options);
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

/** The operation is valid but the system is not in a state that allows it (e.g. MFA required). */
export class PreconditionFailedError extends SvcError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("precondition_failed", message, options);
  }
}

export class UnavailableError extends SvcError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("unavailable", message, options);
  }
}

export class NotImplementedError extends SvcError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("not_implemented", message, options);
  }
}

export function isSvcError(err: unknown): err is SvcError {
  return err instanceof SvcError;
}

export function hasCode(err: unknown, code: ErrorCode): boolean {
  return err instanceof SvcError && err.code === code;
}

export const isNotFound = (err: unknown): boolean => hasCode(err, "not_found");
export const isAlreadyExists = (err: unknown): boolean => hasCode(err, "already_exists");
export const isCompareFailed = (err: unknown): boolean => hasCode(err, "compare_failed");
export const isAccessDenied = (err: unknown): boolean => hasCode(err, "access_denied");
