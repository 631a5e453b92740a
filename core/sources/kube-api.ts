// Small shared pieces for talking to the Kubernetes API with @kubernetes/client-node 2.x: loading a
// kubeconfig, the custom-resource coordinates of each kind, and turning client errors into our
// typed errors. Messages carry the apiserver's own Status message, never request bodies, so a
// Secret's content can never reach a log through an error.
import {
  type ConfigurationOptions,
  KubeConfig,
  Observable,
  type ObservableMiddleware,
  type RequestContext,
} from "@kubernetes/client-node";
import {
  AccessDeniedError,
  AlreadyExistsError,
  BadParameterError,
  CompareFailedError,
  NotAuthenticatedError,
  NotFoundError,
  SvcError,
  UnavailableError,
} from "../errors.ts";
import { API_GROUP, kindInfo, type ResourceKind } from "../resources/index.ts";

export const CR_VERSION = "v1";
/** The label every object the platform creates carries. */
export const PART_OF_LABEL = "app.kubernetes.io/part-of";
export const PART_OF_VALUE = "svc";

/**
 * A kubeconfig from a file, or the usual default chain ($KUBECONFIG, ~/.kube/config, or the
 * in-cluster service account) when no path is given.
 */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

/** Group, version and plural of a kind's custom resource. */
export function crCoordinates(kind: ResourceKind): { group: string; version: string; plural: string } {
  return { group: API_GROUP, version: CR_VERSION, plural: kindInfo[kind].plural };
}

/** The list/watch path of a kind in a namespace. */
export function crPath(namespace: string, kind: ResourceKind): string {
  return `/apis/${API_GROUP}/${CR_VERSION}/namespaces/${encodeURIComponent(namespace)}/${kindInfo[kind].plural}`;
}

/**
 * HTTP status of a client-node failure (ApiException.code, or the watch's error.statusCode), or
 * undefined for other failures (network, TLS, timeouts).
 */
export function kubeStatusCode(err: unknown): number | undefined {
  if (err === null || typeof err !== "object") return undefined;
  for (const code of [(err as { code?: unknown }).code, (err as { statusCode?: unknown }).statusCode]) {
    if (typeof code === "number" && code >= 100 && code < 600) return code;
  }
  return undefined;
}

/** The `message` of the Kubernetes Status in an ApiException body, when there is one. */
export function kubeStatusMessage(err: unknown): string | undefined {
  if (err === null || typeof err !== "object") return undefined;
  const body = (err as { body?: unknown }).body;
  let parsed: unknown = body;
  if (typeof body === "string") {
    try {
      parsed = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  if (parsed && typeof parsed === "object") {
    const message = (parsed as { message?: unknown }).message;
    if (typeof message === "string") return message;
  }
  return undefined;
}

/** The Status `reason` (AlreadyExists, Conflict, Invalid, ...) of an ApiException. */
export function kubeStatusReason(err: unknown): string | undefined {
  if (err === null || typeof err !== "object") return undefined;
  const body = (err as { body?: unknown }).body;
  try {
    const parsed: unknown = typeof body === "string" ? JSON.parse(body) : body;
    const reason = (parsed as { reason?: unknown } | null)?.reason;
    return typeof reason === "string" ? reason : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Maps a client-node failure to a typed error. `what` names the object ("Role \"dev\"").
 * Unknown failures (connection refused, TLS, timeouts) become UnavailableError.
 */
export function kubeError(err: unknown, what: string): SvcError {
  if (err instanceof SvcError) return err;
  const code = kubeStatusCode(err);
  const message = kubeStatusMessage(err);
  const detail = message ? `: ${message}` : "";
  switch (code) {
    case 400:
    case 422:
      return new BadParameterError(`${what} refused by the apiserver${detail}`);
    case 401:
      return new NotAuthenticatedError(`apiserver refused our credentials for ${what}`);
    case 403:
      return new AccessDeniedError(`${what}: forbidden by the apiserver${detail}`);
    case 404:
      return new NotFoundError(`${what} not found`);
    case 409:
      return kubeStatusReason(err) === "AlreadyExists"
        ? new AlreadyExistsError(`${what} already exists`)
        : new CompareFailedError(`${what} changed concurrently${detail}`);
    case undefined: {
      const text = err instanceof Error ? err.message.split("\n")[0] : String(err);
      return new UnavailableError(`apiserver unreachable for ${what}: ${text}`);
    }
    default:
      return new UnavailableError(`apiserver answered ${code} for ${what}${detail}`);
  }
}

/**
 * Per-call options that abort the request when `signal` aborts (e.g. AbortSignal.timeout(ms)):
 * client-node's generated calls have no timeout of their own, so a hung apiserver connection
 * would otherwise hold the caller forever.
 */
export function abortOptions(
  signal: AbortSignal,
  opt?: ConfigurationOptions<ObservableMiddleware>,
): ConfigurationOptions<ObservableMiddleware> {
  const middleware: ObservableMiddleware = {
    pre: (ctx: RequestContext) => {
      ctx.setSignal(signal);
      return new Observable(Promise.resolve(ctx));
    },
    post: (response) => new Observable(Promise.resolve(response)),
  };
  return {
    ...opt,
    middleware: [...(opt?.middleware ?? []), middleware],
    middlewareMergeStrategy: "append",
  };
}
