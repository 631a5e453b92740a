// Status conditions the way Kubernetes tools expect them: `Ready` with a reason and message, its
// lastTransitionTime moving only when the status flips, and observedGeneration saying which spec
// the condition describes (so `kubectl wait --for=condition=Ready` never trusts a stale answer).
import type { Condition } from "../core/resources/index.ts";

export type ConditionStatus = Condition["status"];

export interface ReadyState {
  status: ConditionStatus;
  /** CamelCase, machine-readable (Valid, InvalidRegex, UnknownRole, SecretNotFound, Expired, ...). */
  reason: string;
  /** One sentence for a human; never a secret. */
  message: string;
}

export const READY = "Ready";
const MESSAGE_MAX = 4096;

/** The conditions with Ready set to `state`; other condition types are kept as they were. */
export function withReady(
  previous: readonly Condition[] | undefined,
  state: ReadyState,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const old = previous?.find((c) => c.type === READY);
  const message =
    state.message.length > MESSAGE_MAX ? `${state.message.slice(0, MESSAGE_MAX - 1)}…` : state.message;
  const ready: Condition = {
    type: READY,
    status: state.status,
    reason: state.reason,
    message,
    lastTransitionTime: old && old.status === state.status ? old.lastTransitionTime : now.toISOString(),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  return [...(previous ?? []).filter((c) => c.type !== READY), ready];
}

/** The Ready condition, if any. */
export function readyOf(conditions: readonly Condition[] | undefined): Condition | undefined {
  return conditions?.find((c) => c.type === READY);
}

/** Whether Ready would change in a way a user sees (status or reason), i.e. worth an Event. */
export function readyTransition(previous: readonly Condition[] | undefined, state: ReadyState): boolean {
  const old = readyOf(previous);
  return !old || old.status !== state.status || old.reason !== state.reason;
}
