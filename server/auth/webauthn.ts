// WebAuthn second factor: device storage in the state backend and the two ceremonies (enrolment
// and login) with @simplewebauthn/server. The proxy only relays browser JSON; challenges and
// counters live here so any auth replica can finish a ceremony another one began. Challenges are
// single-use (deleted by revision before verification) and expire after 5 minutes.
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import type { Backend } from "../../core/backend/backend.ts";
import type { Clock } from "../../core/clock.ts";
import {
  BadParameterError,
  isCompareFailed,
  isNotFound,
  NotAuthenticatedError,
  NotFoundError,
} from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import { hashSecret, randomSecret } from "./sessions.ts";
import { hasControlChars } from "./text.ts";

export const CHALLENGE_TTL_MS = 5 * 60 * 1000;
const DEVICE_PREFIX = "webauthn-devices/";
const CHALLENGE_PREFIX = "webauthn-challenges/";
const MFA_TOKEN_PREFIX = "mfa-tokens/";
const MAX_DEVICES = 16;

export interface RelyingParty {
  rpId: string;
  rpName: string;
  origin: string;
}

export interface StoredDevice {
  id: string;
  name: string;
  publicKey: string;
  counter: number;
  transports: string[];
  created: string;
  lastUsed: string;
}

export function checkRelyingParty(rp: Partial<RelyingParty> | null | undefined): RelyingParty {
  const rpId = rp?.rpId ?? "";
  const origin = rp?.origin ?? "";
  if (!/^[a-z0-9.-]{1,253}$/i.test(rpId)) throw new BadParameterError("relying_party.rp_id is required");
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new BadParameterError("relying_party.origin must be a URL");
  }
  if (url.protocol !== "https:" && url.hostname !== "localhost")
    throw new BadParameterError("relying_party.origin must be https");
  return { rpId, rpName: rp?.rpName || rpId, origin };
}

function parseJson<T>(text: string, what: string): T {
  try {
    const v: unknown = JSON.parse(text);
    if (v === null || typeof v !== "object") throw new Error("not an object");
    return v as T;
  } catch {
    throw new BadParameterError(`${what} must be a JSON object`);
  }
}

/** A device's name as stored: trimmed, 1..64 characters without control characters. */
function deviceName(requested: string): string {
  const name = requested.trim() || "security key";
  if (name.length > 64 || hasControlChars(name))
    throw new BadParameterError("device_name is too long or has control characters");
  return name;
}

export class WebAuthnStore {
  readonly #backend: Backend;
  readonly #clock: Clock;

  constructor(deps: { backend: Backend; clock: Clock }) {
    this.#backend = deps.backend;
    this.#clock = deps.clock;
  }

  async devices(username: string): Promise<StoredDevice[]> {
    const items = await this.#backend.range(`${DEVICE_PREFIX}${username}/`);
    return items.map((i) => i.value as unknown as StoredDevice);
  }

  async hasDevices(username: string): Promise<boolean> {
    return (await this.#backend.range(`${DEVICE_PREFIX}${username}/`, { limit: 1 })).length > 0;
  }

  async deleteDevice(username: string, id: string): Promise<void> {
    try {
      await this.#backend.delete(`${DEVICE_PREFIX}${username}/${id}`);
    } catch (err) {
      if (isNotFound(err)) throw new NotFoundError("no such device");
      throw err;
    }
  }

  /** Renames one of the user's devices; a login's counter update racing it is kept (compare-and-swap). */
  async renameDevice(username: string, id: string, newName: string): Promise<StoredDevice> {
    const name = deviceName(newName);
    const key = `${DEVICE_PREFIX}${username}/${id}`;
    for (let attempt = 0; ; attempt++) {
      let item: Awaited<ReturnType<Backend["get"]>>;
      try {
        item = await this.#backend.get(key);
      } catch (err) {
        if (isNotFound(err)) throw new NotFoundError("no such device");
        throw err;
      }
      const device: StoredDevice = { ...(item.value as unknown as StoredDevice), name };
      try {
        await this.#backend.compareAndSwap(key, item.revision, device as unknown as JsonObject);
        return device;
      } catch (err) {
        if (!isCompareFailed(err) || attempt >= 4) throw err;
      }
    }
  }

  async deleteAll(username: string): Promise<void> {
    await this.#backend.deleteRange(`${DEVICE_PREFIX}${username}/`);
  }

  /** After a correct password: a short-lived token that lets the holder start the WebAuthn step. */
  async issueMfaToken(username: string): Promise<string> {
    const token = randomSecret(32);
    await this.#backend.create(
      MFA_TOKEN_PREFIX + hashSecret(token),
      { username },
      { ttlMs: CHALLENGE_TTL_MS },
    );
    return token;
  }

  async beginLogin(
    mfaToken: string,
    rp: RelyingParty,
  ): Promise<{ challengeId: string; optionsJson: string }> {
    let username: string;
    try {
      const item = await this.#backend.get(MFA_TOKEN_PREFIX + hashSecret(mfaToken));
      username = String((item.value as JsonObject)["username"]);
    } catch (err) {
      if (isNotFound(err)) throw new NotAuthenticatedError("invalid or expired mfa token");
      throw err;
    }
    return this.beginLoginFor(username, rp, hashSecret(mfaToken));
  }

  async beginLoginFor(
    username: string,
    rp: RelyingParty,
    mfaTokenHash: string,
  ): Promise<{ challengeId: string; optionsJson: string }> {
    const devices = await this.devices(username);
    if (devices.length === 0) throw new NotAuthenticatedError("no WebAuthn device enrolled");
    const options = await generateAuthenticationOptions({
      rpID: rp.rpId,
      allowCredentials: devices.map((d) => ({ id: d.id, transports: d.transports })),
      userVerification: "preferred",
    });
    const challengeId = randomSecret(16);
    await this.#backend.create(
      CHALLENGE_PREFIX + challengeId,
      { kind: "login", username, challenge: options.challenge, rpId: rp.rpId, mfaTokenHash },
      { ttlMs: CHALLENGE_TTL_MS },
    );
    return { challengeId, optionsJson: JSON.stringify(options) };
  }

  /** Verifies the assertion; returns the user name. The challenge and mfa token are consumed. */
  async finishLogin(challengeId: string, credentialJson: string, rp: RelyingParty): Promise<string> {
    const pending = await this.#takeChallenge(challengeId, "login");
    if (pending["rpId"] !== rp.rpId) throw new NotAuthenticatedError("WebAuthn verification failed");
    const username = String(pending["username"]);
    const response = parseJson<AuthenticationResponseJSON>(credentialJson, "credential_json");
    if (typeof response.id !== "string" || !/^[A-Za-z0-9_-]{1,1024}$/.test(response.id)) {
      throw new BadParameterError("credential_json.id is malformed");
    }
    const key = `${DEVICE_PREFIX}${username}/${response.id}`;
    let item: Awaited<ReturnType<Backend["get"]>>;
    try {
      item = await this.#backend.get(key);
    } catch (err) {
      if (isNotFound(err)) throw new NotAuthenticatedError("WebAuthn verification failed");
      throw err;
    }
    const device = item.value as unknown as StoredDevice;
    let result: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
    try {
      result = await verifyAuthenticationResponse({
        response,
        expectedChallenge: String(pending["challenge"]),
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpId,
        credential: {
          id: device.id,
          publicKey: Buffer.from(device.publicKey, "base64url"),
          counter: device.counter,
          transports: device.transports,
        },
        requireUserVerification: false,
      });
    } catch {
      // The library's reason (counter, signature, origin) is not the client's business.
      throw new NotAuthenticatedError("WebAuthn verification failed");
    }
    if (!result.verified) throw new NotAuthenticatedError("WebAuthn verification failed");
    const updated: StoredDevice = {
      ...device,
      counter: result.authenticationInfo.newCounter,
      lastUsed: this.#clock.now().toISOString(),
    };
    try {
      // By revision: two concurrent assertions with the same counter cannot both succeed.
      await this.#backend.compareAndSwap(key, item.revision, updated as unknown as JsonObject);
    } catch (err) {
      if (isCompareFailed(err) || isNotFound(err))
        throw new NotAuthenticatedError("WebAuthn verification failed");
      throw err;
    }
    const mfaTokenHash = pending["mfaTokenHash"];
    if (typeof mfaTokenHash === "string" && mfaTokenHash !== "") {
      await this.#backend.delete(MFA_TOKEN_PREFIX + mfaTokenHash).catch(() => undefined);
    }
    return username;
  }

  async beginRegistration(
    username: string,
    rp: RelyingParty,
  ): Promise<{ challengeId: string; optionsJson: string }> {
    const devices = await this.devices(username);
    if (devices.length >= MAX_DEVICES) throw new BadParameterError(`at most ${MAX_DEVICES} devices per user`);
    const options = await generateRegistrationOptions({
      rpName: rp.rpName,
      rpID: rp.rpId,
      userName: username,
      attestationType: "none",
      excludeCredentials: devices.map((d) => ({ id: d.id, transports: d.transports })),
      authenticatorSelection: { residentKey: "discouraged", userVerification: "preferred" },
    });
    const challengeId = randomSecret(16);
    await this.#backend.create(
      CHALLENGE_PREFIX + challengeId,
      { kind: "register", username, challenge: options.challenge, rpId: rp.rpId },
      { ttlMs: CHALLENGE_TTL_MS },
    );
    return { challengeId, optionsJson: JSON.stringify(options) };
  }

  async finishRegistration(
    username: string,
    challengeId: string,
    credentialJson: string,
    rp: RelyingParty,
    requestedName: string,
  ): Promise<StoredDevice> {
    const name = deviceName(requestedName);
    const pending = await this.#takeChallenge(challengeId, "register");
    if (pending["username"] !== username || pending["rpId"] !== rp.rpId) {
      throw new BadParameterError("challenge does not belong to this enrolment");
    }
    const response = parseJson<RegistrationResponseJSON>(credentialJson, "credential_json");
    let result: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
    try {
      result = await verifyRegistrationResponse({
        response,
        expectedChallenge: String(pending["challenge"]),
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpId,
        requireUserVerification: false,
      });
    } catch {
      throw new BadParameterError("WebAuthn registration could not be verified");
    }
    if (!result.verified || !result.registrationInfo) {
      throw new BadParameterError("WebAuthn registration could not be verified");
    }
    const cred = result.registrationInfo.credential;
    const now = this.#clock.now().toISOString();
    const device: StoredDevice = {
      id: cred.id,
      name,
      publicKey: Buffer.from(cred.publicKey).toString("base64url"),
      counter: cred.counter,
      transports: cred.transports ?? [],
      created: now,
      lastUsed: "",
    };
    await this.#backend.create(`${DEVICE_PREFIX}${username}/${cred.id}`, device as unknown as JsonObject);
    return device;
  }

  async #takeChallenge(challengeId: string, kind: "login" | "register"): Promise<JsonObject> {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(challengeId)) throw new BadParameterError("challenge_id is malformed");
    const key = CHALLENGE_PREFIX + challengeId;
    try {
      const item = await this.#backend.get(key);
      // Deleted by revision first: a challenge is answered once, even under concurrent finishes.
      await this.#backend.compareAndDelete(key, item.revision);
      const v = item.value as JsonObject;
      if (v["kind"] !== kind) throw new NotAuthenticatedError("invalid or expired challenge");
      return v;
    } catch (err) {
      if (isNotFound(err) || isCompareFailed(err))
        throw new NotAuthenticatedError("invalid or expired challenge");
      throw err;
    }
  }
}
