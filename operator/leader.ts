// Leader election on a coordination.k8s.io/v1 Lease, written here because @kubernetes/client-node
// 2.x ships no leader-election helper (it has the generated CoordinationV1Api only). It follows
// client-go's leaderelection: a candidate takes the Lease when it is free or when its holder has not
// renewed it for leaseDuration *as observed locally* (our own clock measures how long the record
// stayed unchanged, so clock skew between machines does not matter); the leader renews every
// retryPeriod and gives up leadership if it could not renew within renewDeadline, which is shorter
// than leaseDuration so it stops working before anyone else may start. Writes carry the Lease's
// resourceVersion, so two candidates racing cannot both win. release() empties the holder so a
// successor takes over at once (used on SIGTERM). Every call carries a deadline (abortOptions): a
// renewal is aborted when the renew deadline passes, so a hung apiserver request cannot keep a
// leader working after it may have lost the Lease (client-go bounds its renewals the same way).
import { CoordinationV1Api, type KubeConfig, type V1Lease, V1MicroTime } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { BadParameterError } from "../core/errors.ts";
import {
  abortOptions,
  kubeError,
  kubeStatusCode,
  PART_OF_LABEL,
  PART_OF_VALUE,
} from "../core/sources/kube-api.ts";

export interface LeaderElectionOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** Lease name (default "svc-operator"). */
  leaseName?: string;
  /** Unique per process (pod name plus a random suffix). */
  identity: string;
  /** How long a Lease stays valid without renewal (default 15 s). */
  leaseDurationMs?: number;
  /** The leader steps down when it could not renew for this long (default 10 s). */
  renewDeadlineMs?: number;
  /** Pause between attempts to acquire or renew (default 2 s). */
  retryPeriodMs?: number;
  logger: Logger;
  /** Called when this process becomes leader; `signal` aborts when leadership ends. */
  onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /** Called when leadership ends (lost or released). */
  onStoppedLeading: () => void | Promise<void>;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });

/** The delay with up to +20 % spread, so candidates do not hit the apiserver in lockstep. */
const jittered = (ms: number) => Math.round(ms * (1 + Math.random() * 0.2));

export class LeaderElector {
  readonly #o: Required<Omit<LeaderElectionOptions, "kubeConfig">> & { kubeConfig: KubeConfig };
  readonly #api: CoordinationV1Api;
  readonly #stop = new AbortController();
  #leading: AbortController | undefined;
  /** The last Lease record seen, and when (our clock) it last changed. */
  #observed: { holder: string; renewTime: string; at: number } | undefined;
  #loop: Promise<void> | undefined;
  /** When (our clock) the apiserver last answered a Lease call, whatever it answered. */
  #lastContact: number | undefined;

  constructor(o: LeaderElectionOptions) {
    const leaseDurationMs = o.leaseDurationMs ?? 15_000;
    const renewDeadlineMs = o.renewDeadlineMs ?? 10_000;
    const retryPeriodMs = o.retryPeriodMs ?? 2_000;
    if (!(leaseDurationMs > renewDeadlineMs && renewDeadlineMs > retryPeriodMs && retryPeriodMs > 0)) {
      throw new BadParameterError("leader election needs leaseDuration > renewDeadline > retryPeriod > 0");
    }
    if (!o.identity) throw new BadParameterError("leader election needs an identity");
    this.#o = { leaseName: "svc-operator", ...o, leaseDurationMs, renewDeadlineMs, retryPeriodMs };
    this.#api = o.kubeConfig.makeApiClient(CoordinationV1Api);
  }

  get identity(): string {
    return this.#o.identity;
  }

  isLeader(): boolean {
    return this.#leading !== undefined;
  }

  /** When the apiserver last answered a Lease call (ms epoch), for a standby's readiness. */
  lastContact(): number | undefined {
    return this.#lastContact;
  }

  /** Campaigns until stop(): acquire, lead while renewals succeed, and campaign again after a loss. */
  start(): void {
    this.#loop ??= this.#run();
  }

  /** Stops campaigning; when leading, ends leadership and releases the Lease. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const stop = this.#stop.signal;
    while (!stop.aborted) {
      // acquire
      while (!stop.aborted && !(await this.#attempt(Date.now() + this.#o.renewDeadlineMs)))
        await sleep(jittered(this.#o.retryPeriodMs), stop);
      if (stop.aborted) break;
      const leading = new AbortController();
      this.#leading = leading;
      this.#o.logger.info({ lease: this.#o.leaseName, identity: this.#o.identity }, "became leader");
      Promise.resolve()
        .then(() => this.#o.onStartedLeading(leading.signal))
        .catch((err: unknown) =>
          this.#o.logger.error(
            { err: err instanceof Error ? err.message : String(err) },
            "leader work failed",
          ),
        );
      // renew
      // Counted from before the winning request was sent: the Lease cannot be newer than that.
      let lastRenew = this.#attemptStarted;
      while (!stop.aborted) {
        await sleep(this.#o.retryPeriodMs, stop);
        if (stop.aborted) break;
        const deadline = lastRenew + this.#o.renewDeadlineMs;
        if (await this.#attempt(deadline)) lastRenew = this.#attemptStarted;
        else if (Date.now() >= deadline) break;
      }
      // Stop working before handing the Lease back, so two leaders never overlap.
      leading.abort();
      this.#leading = undefined;
      if (!stop.aborted) this.#o.logger.warn({ lease: this.#o.leaseName }, "lost leadership");
      try {
        await this.#o.onStoppedLeading();
      } catch (err) {
        this.#o.logger.error(
          { err: err instanceof Error ? err.message : String(err) },
          "stopping leader work failed",
        );
      }
      if (stop.aborted) await this.#release();
    }
  }

  #attemptStarted = 0;

  /**
   * One acquire-or-renew attempt that gives up at `deadline` (ms epoch): its requests are aborted
   * then, and an answer that comes later is not waited for.
   */
  async #attempt(deadline: number): Promise<boolean> {
    this.#attemptStarted = Date.now();
    const remaining = Math.max(1, deadline - this.#attemptStarted);
    const signal = AbortSignal.timeout(remaining);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), remaining + 50);
    });
    try {
      return await Promise.race([this.#tryAcquireOrRenew(signal), expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** One attempt; true when we hold the Lease afterwards. Failures count as "not held". */
  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const opts = abortOptions(signal);
    const { namespace, leaseName: name, identity } = this.#o;
    const now = new V1MicroTime(Date.now());
    const durationSeconds = Math.ceil(this.#o.leaseDurationMs / 1000);
    let lease: V1Lease;
    try {
      lease = await this.#api.readNamespacedLease({ name, namespace }, opts);
      this.#contact();
    } catch (err) {
      if (kubeStatusCode(err) !== 404) return this.#failed(err);
      this.#contact();
      try {
        await this.#api.createNamespacedLease(
          {
            namespace,
            body: {
              metadata: { name, namespace, labels: { [PART_OF_LABEL]: PART_OF_VALUE } },
              spec: {
                holderIdentity: identity,
                leaseDurationSeconds: durationSeconds,
                acquireTime: now,
                renewTime: now,
                leaseTransitions: 0,
              },
            },
          },
          opts,
        );
        this.#contact();
        this.#observe(identity, now.toISOString());
        return true;
      } catch (createErr) {
        return this.#failed(createErr); // a 409 means another candidate created it first
      }
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? "";
    const renewTime = spec.renewTime ? new Date(spec.renewTime).toISOString() : "";
    this.#observe(holder, renewTime);
    const observedAt = this.#observed?.at ?? Date.now();
    const heldByOther = holder !== "" && holder !== identity;
    const duration = (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (heldByOther && observedAt + duration > Date.now()) return false;
    if (signal.aborted) return false;
    try {
      await this.#api.replaceNamespacedLease(
        {
          name,
          namespace,
          body: {
            ...lease,
            spec: {
              ...spec,
              holderIdentity: identity,
              leaseDurationSeconds: durationSeconds,
              renewTime: now,
              acquireTime: holder === identity && spec.acquireTime ? spec.acquireTime : now,
              leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === identity ? 0 : 1),
            },
          },
        },
        opts,
      );
      this.#contact();
      this.#observe(identity, now.toISOString());
      return true;
    } catch (err) {
      return this.#failed(err); // 409: someone else wrote it first
    }
  }

  #observe(holder: string, renewTime: string): void {
    const o = this.#observed;
    if (!o || o.holder !== holder || o.renewTime !== renewTime)
      this.#observed = { holder, renewTime, at: Date.now() };
  }

  #contact(): void {
    this.#lastContact = Date.now();
  }

  #failed(err: unknown): false {
    // Any HTTP answer (409, 403, ...) shows the apiserver is reachable.
    if (kubeStatusCode(err) !== undefined) this.#contact();
    if (kubeStatusCode(err) !== 409) {
      this.#o.logger.warn(
        { lease: this.#o.leaseName, err: kubeError(err, "Lease").message },
        "lease attempt failed",
      );
    }
    return false;
  }

  /** Hands the Lease back: empty holder, so the next candidate acquires it without waiting. */
  async #release(): Promise<void> {
    const { namespace, leaseName: name, identity } = this.#o;
    const opts = abortOptions(AbortSignal.timeout(this.#o.renewDeadlineMs));
    try {
      const lease = await this.#api.readNamespacedLease({ name, namespace }, opts);
      if (lease.spec?.holderIdentity !== identity) return;
      await this.#api.replaceNamespacedLease(
        {
          name,
          namespace,
          body: {
            ...lease,
            spec: {
              ...lease.spec,
              holderIdentity: "",
              leaseDurationSeconds: 1,
              renewTime: new V1MicroTime(Date.now()),
            },
          },
        },
        opts,
      );
      this.#o.logger.info({ lease: name }, "released leadership");
    } catch (err) {
      this.#o.logger.warn(
        { lease: name, err: kubeError(err, "Lease").message },
        "could not release the lease",
      );
    }
  }
}
