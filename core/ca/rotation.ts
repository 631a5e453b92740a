// The CA rotation phase machine: pure (no I/O, no clock of its own). A CA type's state names the
// key-store entries of its current key and of the key a rotation added; which one signs and which
// ones are trusted follow from the phase alone, so every auth replica holding the same state
// signs with the same key. docs/ca-rotation.md describes the phases.
import { BadParameterError, PreconditionFailedError } from "../errors.ts";

export const CA_TYPES = ["user_ssh", "host_ssh", "host_x509", "spiffe", "jwt", "app"] as const;
export type CaType = (typeof CA_TYPES)[number];

export const PHASES = ["standby", "init", "update_clients", "update_servers", "rollback"] as const;
export type Phase = (typeof PHASES)[number];
export type RotationMode = "manual" | "auto";

export const DEFAULT_GRACE_SECONDS = 3600;

/** One CA type's rotation state (stored as JSON inside the state document). */
export interface CaRotationState {
  phase: Phase;
  mode: RotationMode;
  graceSeconds: number;
  /** key-store entry of the key the CA had before the rotation (the only one in standby) */
  current: string;
  /** key-store entry of the key the rotation added (init .. update_servers, rollback) */
  next?: string;
  /** how many keys this CA has had (names the next key's store entry) */
  generation: number;
  /** bumped on every change: the SPIFFE bundle's spiffe_sequence follows it */
  sequence: number;
  /** ISO time of the last phase change */
  phaseChangedAt?: string;
  /** automatic mode: when the next phase is due (ISO) */
  nextPhaseAt?: string;
  /** when the last certificate of the key the rotation will remove expires (ISO) */
  oldKeyExpiresAt?: string;
  changedBy?: string;
}

export function isCaType(v: string): v is CaType {
  return (CA_TYPES as readonly string[]).includes(v);
}

export function isPhase(v: string): v is Phase {
  return (PHASES as readonly string[]).includes(v);
}

export function initialState(current: string): CaRotationState {
  return {
    phase: "standby",
    mode: "manual",
    graceSeconds: DEFAULT_GRACE_SECONDS,
    current,
    generation: 1,
    sequence: 1,
  };
}

/** The store entry whose key signs now. */
export function signingEntry(s: CaRotationState): string {
  return (s.phase === "update_clients" || s.phase === "update_servers") && s.next ? s.next : s.current;
}

/** Every store entry whose key is trusted now (the signing one first). */
export function trustedEntries(s: CaRotationState): string[] {
  const signing = signingEntry(s);
  const all = s.next ? [s.current, s.next] : [s.current];
  return [signing, ...all.filter((e) => e !== signing)];
}

export type KeyRole = "active" | "next" | "previous";

/** The role each trusted entry plays (proto CaKey.role). */
export function keyRoles(s: CaRotationState): { entry: string; role: KeyRole }[] {
  const signing = signingEntry(s);
  return trustedEntries(s).map((entry) => ({
    entry,
    role: entry === signing ? "active" : entry === s.next ? "next" : "previous",
  }));
}

const ORDER: Partial<Record<Phase, Phase>> = {
  standby: "init",
  init: "update_clients",
  update_clients: "update_servers",
  update_servers: "standby",
  rollback: "standby",
};

export interface TransitionInput {
  to: Phase;
  now: Date;
  /** the longest lifetime of what this CA issues: the old key's certificates outlive the switch by it */
  lifetimeSeconds: number;
  /** standby: end the rotation even though certificates of the removed key are still valid */
  force?: boolean;
  /** init: the store entry of the freshly created key */
  nextEntry?: string;
  mode?: RotationMode;
  graceSeconds?: number;
  who?: string;
}

/** The phase `s` moves to next on its own (automatic mode), or undefined when it stays. */
export function autoTarget(s: CaRotationState): Phase | undefined {
  if (s.mode !== "auto") return undefined;
  const to = ORDER[s.phase];
  return to === "init" ? undefined : to;
}

/** When an automatic rotation moves on from `s` (undefined: it does not). */
export function autoDueAt(s: CaRotationState): Date | undefined {
  if (!autoTarget(s) || !s.phaseChangedAt) return undefined;
  const held = new Date(s.phaseChangedAt).getTime() + s.graceSeconds * 1000;
  // The last step removes the old key: never before its certificates have expired.
  const expires =
    s.phase === "update_servers" && s.oldKeyExpiresAt ? new Date(s.oldKeyExpiresAt).getTime() : 0;
  return new Date(Math.max(held, expires));
}

/** The state after moving `s` to `input.to`; throws when the move is not allowed. */
export function transition(s: CaRotationState, input: TransitionInput): CaRotationState {
  const { to, now } = input;
  const at = now.toISOString();
  const from = s.phase;
  if (to === from) throw new PreconditionFailedError(`the CA is already in phase ${from}`);
  if (to === "rollback") {
    if (from === "standby" || from === "rollback")
      throw new PreconditionFailedError(`cannot roll back from phase ${from}: no rotation is in progress`);
  } else if (ORDER[from] !== to) {
    throw new PreconditionFailedError(
      `cannot move from phase ${from} to ${to}; the next phase is ${ORDER[from] ?? "standby"}${
        from === "standby" ? "" : " (or rollback)"
      }`,
    );
  }
  const base: CaRotationState = {
    ...s,
    phase: to,
    phaseChangedAt: at,
    sequence: s.sequence + 1,
    ...(input.who ? { changedBy: input.who } : {}),
  };
  delete base.nextPhaseAt;
  const expiry = new Date(now.getTime() + input.lifetimeSeconds * 1000).toISOString();
  let out: CaRotationState;
  switch (to) {
    case "init": {
      if (!input.nextEntry) throw new BadParameterError("init needs the new key's store entry");
      const grace = input.graceSeconds ?? s.graceSeconds;
      if (!Number.isInteger(grace) || grace < 1)
        throw new BadParameterError("grace period must be at least 1 second");
      out = {
        ...base,
        next: input.nextEntry,
        generation: s.generation + 1,
        mode: input.mode ?? "manual",
        graceSeconds: grace,
      };
      delete out.oldKeyExpiresAt;
      break;
    }
    case "update_clients":
      // Issuing switches to the new key: the old key's certificates live at most this long.
      out = { ...base, oldKeyExpiresAt: expiry };
      break;
    case "update_servers":
      out = { ...base };
      break;
    case "rollback":
      // From init the new key never signed; later it did, and those certificates must expire
      // before it can be dropped.
      out = { ...base, mode: "manual" };
      if (from === "init") delete out.oldKeyExpiresAt;
      else out.oldKeyExpiresAt = expiry;
      break;
    case "standby": {
      const until = s.oldKeyExpiresAt ? new Date(s.oldKeyExpiresAt) : undefined;
      if (until && now.getTime() < until.getTime() && !input.force) {
        throw new PreconditionFailedError(
          `certificates signed by the key being removed are valid until ${until.toISOString()}; ` +
            "ending the rotation now would make them fail (use force to end it anyway)",
        );
      }
      out = { ...base, mode: "manual" };
      if (from === "update_servers" && s.next) out.current = s.next;
      delete out.next;
      delete out.oldKeyExpiresAt;
      break;
    }
    default:
      throw new BadParameterError(`unknown phase ${String(to)}`);
  }
  if (input.mode === "manual") out.mode = "manual";
  if (out.mode === "auto") {
    const due = autoDueAt(out);
    if (due) out.nextPhaseAt = due.toISOString();
  }
  return out;
}

// ---- the stored document ----------------------------------------------------------------------

export interface RotationDocument {
  version: 1;
  authorities: Partial<Record<CaType, CaRotationState>>;
}

export function emptyDocument(): RotationDocument {
  return { version: 1, authorities: {} };
}

const ENTRY = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** Parses and checks a stored document; a damaged one is refused rather than half-used. */
export function parseDocument(raw: unknown): RotationDocument {
  if (typeof raw !== "object" || raw === null || (raw as { version?: unknown }).version !== 1)
    throw new BadParameterError("CA rotation state has an unknown format");
  const auth = (raw as { authorities?: unknown }).authorities;
  if (typeof auth !== "object" || auth === null)
    throw new BadParameterError("CA rotation state lacks authorities");
  const out = emptyDocument();
  for (const [type, v] of Object.entries(auth)) {
    if (!isCaType(type)) continue; // a newer version's CA type: left alone
    const s = v as Partial<CaRotationState>;
    const ok =
      typeof s === "object" &&
      s !== null &&
      typeof s.phase === "string" &&
      isPhase(s.phase) &&
      (s.mode === "manual" || s.mode === "auto") &&
      typeof s.current === "string" &&
      ENTRY.test(s.current) &&
      (s.next === undefined || (typeof s.next === "string" && ENTRY.test(s.next))) &&
      Number.isInteger(s.generation) &&
      Number.isInteger(s.sequence) &&
      Number.isInteger(s.graceSeconds);
    if (!ok) throw new BadParameterError(`CA rotation state of ${type} is damaged`);
    if (s.phase !== "standby" && !s.next)
      throw new BadParameterError(`CA rotation state of ${type} lacks its new key`);
    out.authorities[type] = s as CaRotationState;
  }
  return out;
}
