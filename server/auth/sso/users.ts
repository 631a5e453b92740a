// SSO users: not User resources but runtime records `sso-users/<name>` that auth upserts at each
// successful login through a connector: the connector, the roles claims_to_roles gave, the
// provider's claims as traits, and `expires` = the latest expiry of the user's sessions (the
// record outlives none of them, and the backend drops it then). Auth resolves a name as the User
// resource if there is one, else this record while it lives (service.ts). Records are read from
// the backend on every authenticated call of a name without a User resource, so a record changed
// or deleted by another replica (connector deleted, new login) counts at once; the in-memory copy
// only lets the synchronous checks of that same call see it.
import type { Backend } from "../../../core/backend/backend.ts";
import type { Clock } from "../../../core/clock.ts";
import { isNotFound } from "../../../core/errors.ts";
import type { JsonObject } from "../../../core/json.ts";
import { API_VERSION, type User } from "../../../core/resources/index.ts";

const PREFIX = "sso-users/";

export interface SsoUserRecord {
  name: string;
  connector: string;
  roles: string[];
  traits: Record<string, string[]>;
  expires: Date;
  /** Cap on new sessions from the login that wrote it (a WebAuthn step that follows obeys it). */
  sessionNotAfter: Date;
}

interface Cached {
  record: SsoUserRecord;
  /** A User-shaped view, the same object while the record is unchanged (checker caching). */
  user: User;
  revision: number;
}

export class SsoUsers {
  readonly #backend: Backend;
  readonly #clock: Clock;
  readonly #cache = new Map<string, Cached>();

  constructor(deps: { backend: Backend; clock: Clock }) {
    this.#backend = deps.backend;
    this.#clock = deps.clock;
  }

  /** The record as last loaded, while it lives (synchronous: for checks after load()). */
  cached(name: string): { record: SsoUserRecord; user: User } | undefined {
    const c = this.#cache.get(name);
    if (!c) return undefined;
    if (c.record.expires.getTime() <= this.#clock.now().getTime()) {
      this.#cache.delete(name);
      return undefined;
    }
    return c;
  }

  /** Reads the record from the backend into the cache; undefined when there is none (any more). */
  async load(name: string): Promise<SsoUserRecord | undefined> {
    try {
      const item = await this.#backend.get(PREFIX + name);
      const hit = this.#cache.get(name);
      if (hit && hit.revision === item.revision) return this.cached(name)?.record;
      const record = fromJson(name, item.value as JsonObject);
      this.#cache.set(name, { record, user: syntheticUser(record), revision: item.revision });
      return this.cached(name)?.record;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.#cache.delete(name);
      return undefined;
    }
  }

  /**
   * Writes the record of a login: roles and traits from this login, expiry the later of the old
   * one (same connector: its older sessions still live) and this session's.
   */
  async upsert(r: SsoUserRecord): Promise<SsoUserRecord> {
    const key = PREFIX + r.name;
    for (let attempt = 0; ; attempt++) {
      let current: { revision: number; record: SsoUserRecord } | undefined;
      try {
        const item = await this.#backend.get(key);
        current = { revision: item.revision, record: fromJson(r.name, item.value as JsonObject) };
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const keepOld = current && current.record.connector === r.connector;
      const expires =
        keepOld && current && current.record.expires > r.expires ? current.record.expires : r.expires;
      const next = { ...r, expires };
      try {
        if (current) await this.#backend.compareAndSwap(key, current.revision, toJson(next), { expires });
        else await this.#backend.create(key, toJson(next), { expires });
        await this.load(r.name);
        return next;
      } catch (err) {
        // Another replica wrote meanwhile (a parallel login of the same user): read and retry.
        if (attempt >= 5) throw err;
      }
    }
  }

  async remove(name: string): Promise<void> {
    this.#cache.delete(name);
    await this.#backend.delete(PREFIX + name).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }

  /** The names of live records a connector made. */
  async namesOf(connector: string): Promise<string[]> {
    const items = await this.#backend.range(PREFIX);
    return items
      .filter((i) => (i.value as JsonObject)["connector"] === connector)
      .map((i) => i.key.slice(PREFIX.length));
  }
}

function syntheticUser(r: SsoUserRecord): User {
  return {
    apiVersion: API_VERSION,
    kind: "User",
    metadata: { name: r.name },
    // local_login false: an SSO name never logs in with a password.
    spec: { roles: [...r.roles], traits: r.traits, local_login: false, disabled: false },
  } as User;
}

function toJson(r: SsoUserRecord): JsonObject {
  return {
    connector: r.connector,
    roles: r.roles,
    traits: r.traits,
    expires: r.expires.toISOString(),
    session_not_after: r.sessionNotAfter.toISOString(),
  };
}

function fromJson(name: string, v: JsonObject): SsoUserRecord {
  const traits: Record<string, string[]> = {};
  const raw = v["traits"];
  if (raw && typeof raw === "object" && !Array.isArray(raw)) {
    for (const [k, vals] of Object.entries(raw)) {
      if (Array.isArray(vals)) traits[k] = vals.filter((x): x is string => typeof x === "string");
    }
  }
  const roles = Array.isArray(v["roles"]) ? v["roles"].filter((x): x is string => typeof x === "string") : [];
  const expires = new Date(String(v["expires"]));
  return {
    name,
    connector: String(v["connector"]),
    roles,
    traits,
    expires,
    sessionNotAfter: new Date(String(v["session_not_after"] ?? v["expires"])),
  };
}
