// One-time challenges for the IAM join. Each is 256 random bits, lives a short TTL in the state
// backend (so every auth replica sees it) and is consumed by compareAndDelete: of two replicas
// presented with the same challenge, exactly one deletes it and accepts.
import { createHash, randomBytes } from "node:crypto";
import type { Backend } from "../backend/backend.ts";
import type { Clock } from "../clock.ts";
import { AccessDeniedError, isCompareFailed, isNotFound } from "../errors.ts";

export const IAM_CHALLENGE_TTL_MS = 2 * 60_000;
const PREFIX = "/iam/challenges/";
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export interface IssuedChallenge {
  /** base64url of 32 random bytes; goes to the node, then into its signed header */
  challenge: string;
  expires: Date;
}

export interface IamChallengesDeps {
  backend: Backend;
  clock: Clock;
  /** default IAM_CHALLENGE_TTL_MS */
  ttlMs?: number;
}

// Only a hash is stored, like every secret in the backend: a leaked database holds no live challenge.
const keyFor = (challenge: string): string => PREFIX + createHash("sha256").update(challenge).digest("hex");

const refused = () => new AccessDeniedError("IAM join challenge is unknown, expired or already used");

export class IamChallenges {
  readonly #backend: Backend;
  readonly #clock: Clock;
  readonly #ttlMs: number;

  constructor(deps: IamChallengesDeps) {
    this.#backend = deps.backend;
    this.#clock = deps.clock;
    this.#ttlMs = deps.ttlMs ?? IAM_CHALLENGE_TTL_MS;
  }

  async issue(): Promise<IssuedChallenge> {
    const challenge = randomBytes(32).toString("base64url");
    const expires = new Date(this.#clock.now().getTime() + this.#ttlMs);
    await this.#backend.create(keyFor(challenge), { expires: expires.toISOString() }, { expires });
    return { challenge, expires };
  }

  /** Accepts a live challenge once; AccessDeniedError when unknown, expired or already consumed. */
  async consume(challenge: string): Promise<void> {
    if (!CHALLENGE.test(challenge)) throw refused();
    const key = keyFor(challenge);
    let revision: number;
    let expires: unknown;
    try {
      const item = await this.#backend.get(key);
      revision = item.revision;
      expires =
        typeof item.value === "object" && item.value !== null && !Array.isArray(item.value)
          ? item.value["expires"]
          : undefined;
    } catch (err) {
      if (isNotFound(err)) throw refused();
      throw err;
    }
    try {
      await this.#backend.compareAndDelete(key, revision);
    } catch (err) {
      if (isNotFound(err) || isCompareFailed(err)) throw refused();
      throw err;
    }
    // The backend hides expired items already; this also holds if its clock runs behind ours.
    if (typeof expires !== "string" || Date.parse(expires) <= this.#clock.now().getTime()) throw refused();
  }
}
