// The first admin in Kubernetes mode (`auth.first_admin: {user, secret_name}`): while the User
// `user` exists and has neither a password nor a WebAuthn device, auth keeps ONE one-time reset
// link for it in the Secret `secret_name` (keys `user`, `reset-url`, `expires`), which the chart's
// NOTES.txt tells the installer to read. Once the user has a credential the Secret is deleted; a
// link that expired unused is replaced by a new one.
//
// Exactly once across auth replicas: the replica that creates the backend record
// `first-admin/<user>` (create-only, so one of racing replicas wins) issues the token and writes
// the Secret; the others leave it. The record is a claim with a short deadline until the Secret is
// written, so a replica that died mid-way is taken over; after that it holds the link's expiry,
// and whoever first sees it expired (or its Secret deleted) swaps in a new claim (compare-and-swap)
// and issues anew. The token exists only in the Secret (the backend keeps its hash); it is never
// logged.
import { CoreV1Api, type KubeConfig, type V1Secret } from "@kubernetes/client-node";
import type { Backend, Item } from "../../core/backend/backend.ts";
import type { Clock } from "../../core/clock.ts";
import { isAlreadyExists, isNotFound } from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import { kubeError, kubeStatusCode, PART_OF_LABEL, PART_OF_VALUE } from "../../core/sources/kube-api.ts";
import type { ResourceSource } from "../../core/sources/source.ts";
import type { Logger } from "../logger.ts";
import { PasswordResets } from "./admin-password-reset.ts";
import { getPasswordHash } from "./passwords.ts";
import { WebAuthnStore } from "./webauthn.ts";

/** Label on the Secret auth manages; a same-named Secret without it is never touched. */
export const FIRST_ADMIN_LABEL = "svc.dev/first-admin";
const RECORD_PREFIX = "first-admin/";
/** How long a replica may take between claiming and writing the Secret before others take over. */
const CLAIM_MS = 60_000;

export interface FirstAdminOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  secretName: string;
  user: string;
  /** host:port of proxy.public_addr: the link is https://<it>/web/reset?token=… */
  publicAddr: string;
  backend: Backend;
  source: ResourceSource;
  clock: Clock;
  logger: Logger;
  /** Who claims (logged and stored in the claim), e.g. the Pod name. */
  instance: string;
  /** How often to look (default 10 s); a change of the User looks at once. */
  checkEveryMs?: number;
}

interface Claimed {
  phase: "claimed";
  by: string;
  until: string;
}
interface Written {
  phase: "written";
  expires: string;
}
type FirstAdminRecord = Claimed | Written;

function recordOf(item: Item): FirstAdminRecord | undefined {
  const v = item.value as JsonObject;
  if (v["phase"] === "claimed" && typeof v["until"] === "string")
    return { phase: "claimed", by: String(v["by"] ?? ""), until: v["until"] };
  if (v["phase"] === "written" && typeof v["expires"] === "string")
    return { phase: "written", expires: v["expires"] };
  return undefined;
}

export class FirstAdminSecret {
  readonly #o: FirstAdminOptions;
  readonly #api: CoreV1Api;
  readonly #resets: PasswordResets;
  readonly #webauthn: WebAuthnStore;
  readonly #key: string;
  #timer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  #saidMissing = false;

  constructor(o: FirstAdminOptions) {
    this.#o = o;
    this.#api = o.kubeConfig.makeApiClient(CoreV1Api);
    this.#resets = new PasswordResets({ backend: o.backend, clock: o.clock });
    this.#webauthn = new WebAuthnStore({ backend: o.backend, clock: o.clock });
    this.#key = RECORD_PREFIX + o.user;
  }

  start(): void {
    this.#unsubscribe = this.#o.source.subscribe((event) => {
      if (event.resource.kind === "User" && event.resource.metadata.name === this.#o.user) this.kick();
    });
    this.#timer = setInterval(() => this.kick(), this.#o.checkEveryMs ?? 10_000);
    this.#timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#unsubscribe?.();
    await this.#running;
  }

  /** Looks now (or right after the look in progress). */
  kick(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = (async () => {
      do {
        this.#again = false;
        try {
          await this.check();
        } catch (err) {
          this.#o.logger.warn(
            {
              user: this.#o.user,
              secret: this.#o.secretName,
              err: err instanceof Error ? err.message : String(err),
            },
            "first admin: could not check or write the reset link; retrying",
          );
        }
      } while (this.#again && !this.#stopped);
      this.#running = undefined;
    })();
  }

  /** One look: issue, replace or remove the link as the user's state asks. */
  async check(): Promise<void> {
    const { user } = this.#o;
    if (!this.#o.source.synced()) return;
    if (!this.#o.source.get("User", user)) {
      if (!this.#saidMissing)
        this.#o.logger.info({ user }, "first admin: no User of that name yet; waiting for it");
      this.#saidMissing = true;
      return;
    }
    this.#saidMissing = false;
    const hasCredential =
      (await getPasswordHash(this.#o.backend, user)) !== undefined || (await this.#webauthn.hasDevices(user));
    if (hasCredential) {
      await this.#removeSecret();
      await this.#o.backend.delete(this.#key).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
      return;
    }
    const now = this.#o.clock.now().getTime();
    let item: Item | undefined;
    try {
      item = await this.#o.backend.get(this.#key);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const claim: Claimed = {
      phase: "claimed",
      by: this.#o.instance,
      until: new Date(now + CLAIM_MS).toISOString(),
    };
    let claimed: Item;
    if (!item) {
      try {
        claimed = await this.#o.backend.create(this.#key, { ...claim });
      } catch (err) {
        if (isAlreadyExists(err)) return; // another replica won; it writes the Secret
        throw err;
      }
    } else {
      const rec = recordOf(item);
      // A link nobody can read any more (its Secret was deleted) is replaced as if it expired.
      const due =
        rec === undefined ||
        (rec.phase === "claimed" && Date.parse(rec.until) <= now) ||
        (rec.phase === "written" && (Date.parse(rec.expires) <= now || !(await this.#read())));
      if (!due) return;
      try {
        claimed = await this.#o.backend.compareAndSwap(this.#key, item.revision, { ...claim });
      } catch {
        return; // changed under us: another replica took it
      }
    }
    await this.#issue(claimed);
  }

  async #issue(claimed: Item): Promise<void> {
    const { user, secretName } = this.#o;
    const reset = await this.#resets.issue(user);
    const url = `https://${this.#o.publicAddr}/web/reset?token=${reset.token}`;
    try {
      await this.#writeSecret({ user, "reset-url": url, expires: reset.expires.toISOString() });
    } catch (err) {
      // Nobody can see this token: void it. The claim runs out and a replica tries again.
      await this.#resets.revoke(user).catch(() => undefined);
      throw err;
    }
    await this.#o.backend.compareAndSwap(this.#key, claimed.revision, {
      phase: "written",
      expires: reset.expires.toISOString(),
    });
    this.#o.logger.info(
      { user, secret: secretName, expires: reset.expires.toISOString() },
      "first admin: one-time reset link written to the Secret",
    );
  }

  async #read(): Promise<V1Secret | undefined> {
    try {
      return await this.#api.readNamespacedSecret({ name: this.#o.secretName, namespace: this.#o.namespace });
    } catch (err) {
      if (kubeStatusCode(err) === 404) return undefined;
      throw kubeError(err, `Secret "${this.#o.secretName}"`);
    }
  }

  async #writeSecret(values: Record<string, string>): Promise<void> {
    const { secretName: name, namespace } = this.#o;
    const data = Object.fromEntries(
      Object.entries(values).map(([k, v]) => [k, Buffer.from(v, "utf8").toString("base64")]),
    );
    const labels = { [PART_OF_LABEL]: PART_OF_VALUE, [FIRST_ADMIN_LABEL]: "true" };
    const existing = await this.#read();
    if (existing) this.#ownedOrThrow(existing);
    try {
      if (!existing) {
        await this.#api.createNamespacedSecret({
          namespace,
          body: {
            apiVersion: "v1",
            kind: "Secret",
            type: "Opaque",
            metadata: { name, namespace, labels },
            data,
          },
        });
        return;
      }
      await this.#api.replaceNamespacedSecret({
        name,
        namespace,
        body: {
          ...existing,
          metadata: { ...existing.metadata, labels: { ...existing.metadata?.labels, ...labels } },
          data,
        },
      });
    } catch (err) {
      // The message names the Secret only: never the values.
      throw kubeError(err, `Secret "${name}"`);
    }
  }

  async #removeSecret(): Promise<void> {
    const existing = await this.#read();
    if (!existing) return;
    this.#ownedOrThrow(existing);
    try {
      await this.#api.deleteNamespacedSecret({
        name: this.#o.secretName,
        namespace: this.#o.namespace,
        body: { preconditions: { resourceVersion: existing.metadata?.resourceVersion ?? "" } },
      });
      this.#o.logger.info(
        { user: this.#o.user, secret: this.#o.secretName },
        "first admin has a credential: reset link Secret deleted",
      );
    } catch (err) {
      if (kubeStatusCode(err) === 404 || kubeStatusCode(err) === 409) return;
      throw kubeError(err, `Secret "${this.#o.secretName}"`);
    }
  }

  #ownedOrThrow(secret: V1Secret): void {
    if (secret.metadata?.labels?.[FIRST_ADMIN_LABEL] !== "true") {
      throw new Error(
        `Secret "${this.#o.secretName}" exists without the label ${FIRST_ADMIN_LABEL}=true: not ours, left alone`,
      );
    }
  }
}
