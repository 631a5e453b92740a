// The pieces every reconciler shares: its context, validation of a raw object into a typed
// resource (schema, then the semantic rules the schema cannot say, each mapped to a reason a user
// can act on), finalizer edits, and one status writer that patches only when something changed and
// records an Event when Ready changes.
import type { Logger } from "pino";
import type { Clock } from "../../core/clock.ts";
import {
  type AnyResource,
  type Condition,
  type ResourceKind,
  type ResourceOf,
  semanticProblems,
  validateResource,
} from "../../core/resources/index.ts";
import type { SessionRevoker, TokenUsage } from "../auth-hooks.ts";
import { type ReadyState, readyTransition, withReady } from "../conditions.ts";
import type { EventRecorder } from "../events.ts";
import type { ObjectClient, RawObject } from "../kube.ts";
import type { ReconcileResult } from "../queue.ts";

export interface ReconcileContext {
  objects: ObjectClient;
  events: EventRecorder;
  clock: Clock;
  logger: Logger;
  /** Names of the Roles that exist (custom resources plus presets). */
  roleNames(): ReadonlySet<string>;
  sessionRevoker?: SessionRevoker | undefined;
  tokenUsage?: TokenUsage | undefined;
  /** How soon to look again at something outside our watch (a missing Secret), in ms. */
  recheckMs: number;
  /** Failed finalizer work per object uid: when it first failed and how often. */
  finalizerAttempts: Map<string, { firstFailureAt: number; tries: number }>;
  /** Finalizer work that keeps failing is given up after this long… */
  finalizerTimeoutMs: number;
  /** …or this many tries, and the finalizer removed anyway (with a Warning Event). */
  finalizerMaxTries: number;
  onFinalizerSkipped?: (kind: ResourceKind, finalizer: string) => void;
}

export type Reconciler = (ctx: ReconcileContext, name: string) => Promise<ReconcileResult | undefined>;

export type Checked<K extends ResourceKind> =
  | { ok: true; resource: ResourceOf<K> }
  | { ok: false; state: ReadyState };

/** Reason for the first semantic problem; the message lists them all. */
function reasonOf(problem: string): string {
  if (problem.includes("regular expression")) return "InvalidRegex";
  if (problem.includes("is not internal.")) return "UnknownTrait";
  if (problem.includes(".logins[")) return "InvalidLogin";
  if (problem.includes("unknown resource") || problem.includes("unknown verb")) return "UnknownRuleTarget";
  if (problem.includes("inline secrets")) return "InlineSecret";
  return "InvalidSpec";
}

/**
 * Reason for a validation failure: InvalidSpec, except the App problems a user fixes in one
 * specific place (spec.uri, and the texts of core/resources/app-rules.ts).
 */
function specReasonOf(problem: string): string {
  if (problem.startsWith("spec.uri:")) return "InvalidURI";
  if (problem.includes("a header the proxy owns")) return "ReservedHeader";
  if (/^spec\.rewrite\.headers\[\d+\]\.value: (".*" is not user|unbalanced)/.test(problem))
    return "InvalidHeaderTemplate";
  return "InvalidSpec";
}

/** The raw object checked against the kind's schema and semantic rules. */
export function checkResource<K extends ResourceKind>(kind: K, raw: RawObject): Checked<K> {
  const copy = structuredClone(raw);
  if (copy.metadata) delete copy.metadata.managedFields;
  const checked = validateResource(copy);
  if (!checked.ok) {
    return {
      ok: false,
      state: {
        status: "False",
        reason: specReasonOf(checked.errors[0] ?? ""),
        message: checked.errors.join("; "),
      },
    };
  }
  if (checked.resource.kind !== kind) {
    return { ok: false, state: { status: "False", reason: "InvalidSpec", message: `kind is not ${kind}` } };
  }
  // No clock here: an expired JoinToken is a phase, not an invalid spec.
  const problems = semanticProblems(checked.resource);
  const first = problems[0];
  if (first !== undefined) {
    return { ok: false, state: { status: "False", reason: reasonOf(first), message: problems.join("; ") } };
  }
  return { ok: true, resource: checked.resource as ResourceOf<K> };
}

/** Ready=False UnknownRole when any of `roles` does not exist, else undefined. */
export function unknownRoles(ctx: ReconcileContext, roles: readonly string[]): ReadyState | undefined {
  const known = ctx.roleNames();
  const missing = [...new Set(roles.filter((r) => !known.has(r)))];
  if (missing.length === 0) return undefined;
  return {
    status: "False",
    reason: "UnknownRole",
    message: `no Role named ${missing.map((m) => JSON.stringify(m)).join(", ")}`,
  };
}

export function isDeleting(raw: RawObject): boolean {
  return Boolean(raw.metadata?.deletionTimestamp);
}

export function hasFinalizer(raw: RawObject, finalizer: string): boolean {
  return raw.metadata?.finalizers?.includes(finalizer) ?? false;
}

export async function addFinalizer(
  ctx: ReconcileContext,
  kind: ResourceKind,
  raw: RawObject,
  finalizer: string,
): Promise<void> {
  const meta = raw.metadata ?? {};
  await ctx.objects.setFinalizers(
    kind,
    meta.name ?? "",
    [...(meta.finalizers ?? []), finalizer],
    meta.resourceVersion ?? "",
  );
}

export async function removeFinalizer(
  ctx: ReconcileContext,
  kind: ResourceKind,
  raw: RawObject,
  finalizer: string,
): Promise<void> {
  const meta = raw.metadata ?? {};
  const rest = (meta.finalizers ?? []).filter((f) => f !== finalizer);
  await ctx.objects.setFinalizers(kind, meta.name ?? "", rest, meta.resourceVersion ?? "");
}

interface BaseStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  [key: string]: unknown;
}

function statusOf(raw: RawObject): BaseStatus {
  const s = raw.status;
  return s !== null && typeof s === "object" ? (s as BaseStatus) : {};
}

function sameCondition(a: Condition | undefined, b: Condition | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Writes Ready (and the kind's own status fields in `extra`) when they differ from what the object
 * has, and records an Event when Ready's status or reason changes: Warning when it turns False.
 */
export async function writeStatus<K extends ResourceKind>(
  ctx: ReconcileContext,
  kind: K,
  raw: RawObject,
  state: ReadyState,
  extra: Partial<NonNullable<ResourceOf<K>["status"]>> = {},
): Promise<void> {
  const current = statusOf(raw);
  const generation = raw.metadata?.generation;
  const conditions = withReady(current.conditions, state, generation, ctx.clock.now());
  const next: BaseStatus = {
    ...extra,
    conditions,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  const unchanged =
    current.observedGeneration === next.observedGeneration &&
    (current.conditions?.length ?? 0) === conditions.length &&
    conditions.every((c) =>
      sameCondition(
        c,
        current.conditions?.find((o) => o.type === c.type),
      ),
    ) &&
    Object.entries(extra).every(([k, v]) => JSON.stringify(current[k]) === JSON.stringify(v));
  if (unchanged) return;
  const name = raw.metadata?.name ?? "";
  await ctx.objects.patchStatus(kind, name, next as NonNullable<ResourceOf<K>["status"]>);
  if (readyTransition(current.conditions, state)) {
    await ctx.events.record(
      kind,
      raw,
      state.status === "True" ? "Normal" : "Warning",
      state.reason,
      state.message,
    );
  }
}

export type { AnyResource };
