// `svcd operator`: leader election first; the elected process makes sure the CA Secrets exist,
// then starts the controller; losing leadership stops the controller and the process campaigns
// again. Dependencies (kubeconfig, logger, clock, auth hooks) are passed in.

import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { Gauge } from "prom-client";
import type { CaKeyStore } from "../core/ca/key-store.ts";
import { SecretRotationStateStore } from "../core/ca/rotation-secret-store.ts";
import { SecretCaKeyStore } from "../core/ca/secret-store.ts";
import { type Clock, systemClock } from "../core/clock.ts";
import { BadParameterError } from "../core/errors.ts";
import { loadKubeConfig } from "../core/sources/kube-api.ts";
import { splitHostPort } from "../server/config.ts";
import { createMetricsRegistry, startDiagnostics } from "../server/diagnostics.ts";
import { createLogger } from "../server/logger.ts";
import { OperatorAuthClient } from "./auth-client.ts";
import type { SessionRevoker, TokenUsage } from "./auth-hooks.ts";
import { ensureCas } from "./ca.ts";
import { Controller } from "./controller.ts";
import { KubeEventRecorder } from "./events.ts";
import { KubeObjectClient } from "./kube.ts";
import { LeaderElector } from "./leader.ts";
import { OperatorMetrics } from "./metrics.ts";

export interface OperatorOptions {
  /** Kubeconfig file; without it (and without kubeConfig) the default chain, in-cluster included. */
  kubeconfigPath?: string;
  kubeConfig?: KubeConfig;
  /** Namespace of the custom resources, the CA Secrets and the Lease. */
  namespace: string;
  /** Cluster name written into the CAs. */
  clusterName: string;
  /** SPIFFE trust domain (default: clusterName). */
  trustDomain?: string;
  /** Leader-election identity (default: hostname + random suffix). */
  identity?: string;
  leaseName?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Full reconcile of every object this often (default 5 min). */
  resyncMs?: number;
  /** Re-check of a missing Connector Secret (default 30 s). */
  recheckMs?: number;
  /** Prefix of the CA Secret names (default "svc-ca-"). */
  caSecretPrefix?: string;
  /** Where CA keys live (default: Secrets in the namespace). */
  caStore?: CaKeyStore;
  logger?: Logger;
  clock?: Clock;
  sessionRevoker?: SessionRevoker;
  tokenUsage?: TokenUsage;
  /**
   * host:port of auth: without explicit hooks, an OperatorAuthClient (auth-client.ts) on it is
   * both the SessionRevoker and the TokenUsage.
   */
  authAddr?: string;
  /** Name to verify in auth's server certificate when it differs from the authAddr host. */
  authServerName?: string;
  /** host:port of the diagnostics listener (/healthz, /metrics); none when absent. Port 0 picks one. */
  diagnosticsAddr?: string;
  /** Whether the preset Roles (admin, access) exist without custom resources (default true). */
  presetRoles?: boolean;
  /** A deleted User's finalizer goes after this long even when auth never answered (default 2 min). */
  finalizerTimeoutMs?: number;
  /** /readyz fails once an informer has not been known current this long (default 60 s). */
  staleAfterMs?: number;
  /** Stop (and release the Lease) on SIGTERM / SIGINT. The CLI sets it; tests do not. */
  handleSignals?: boolean;
}

export interface OperatorHandle {
  readonly identity: string;
  isLeader(): boolean;
  /** Port of the diagnostics listener, when one was asked for. */
  readonly diagnosticsPort: number | undefined;
  /** Whether the CA Secrets were confirmed and the controller runs. */
  isReconciling(): boolean;
  /** What /readyz answers (see ready() in runOperator). */
  isReady(): boolean;
  /** Stops reconciling and releases the Lease when leading. Safe to call twice. */
  stop(): Promise<void>;
  /** Resolves once stop() finished (or a signal stopped the operator). */
  readonly done: Promise<void>;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

export async function runOperator(opts: OperatorOptions): Promise<OperatorHandle> {
  if (!opts.namespace) throw new BadParameterError("operator needs a namespace");
  if (!opts.clusterName) throw new BadParameterError("operator needs a cluster name");
  const kubeConfig = opts.kubeConfig ?? loadKubeConfig(opts.kubeconfigPath);
  const logger = opts.logger ?? createLogger({ name: "svc-operator" });
  const clock = opts.clock ?? systemClock;
  const identity = opts.identity ?? `${hostname()}-${randomBytes(4).toString("hex")}`;
  const namespace = opts.namespace;
  const caStore =
    opts.caStore ??
    new SecretCaKeyStore({
      kubeConfig,
      namespace,
      ...(opts.caSecretPrefix ? { prefix: opts.caSecretPrefix } : {}),
    });
  const authClient = opts.authAddr
    ? new OperatorAuthClient({
        address: opts.authAddr,
        caStore,
        // CA rotation (docs/ca-rotation.md): the state Secret beside the CA Secrets.
        ...(opts.caStore
          ? {}
          : {
              rotationStore: new SecretRotationStateStore({
                kubeConfig,
                namespace,
                ...(opts.caSecretPrefix ? { prefix: opts.caSecretPrefix } : {}),
              }),
            }),
        clusterName: opts.clusterName,
        trustDomain: opts.trustDomain ?? opts.clusterName,
        name: identity,
        clock,
        ...(opts.authServerName ? { serverName: opts.authServerName } : {}),
      })
    : undefined;
  const sessionRevoker = opts.sessionRevoker ?? authClient;
  const tokenUsage = opts.tokenUsage ?? authClient;
  if (!sessionRevoker) logger.warn("no SessionRevoker: deleting a User will not revoke its sessions");
  if (!tokenUsage) logger.warn("no TokenUsage: JoinToken phase Used is not reported");

  const registry = createMetricsRegistry("operator");
  const metrics = new OperatorMetrics(registry);
  let active: { controller: Controller; caReady: boolean } | undefined;
  let elector: LeaderElector | undefined;
  const staleAfterS = (opts.staleAfterMs ?? 60_000) / 1000;
  const leaseDurationMs = opts.leaseDurationMs ?? 15_000;
  // Leader: its controller runs, every informer has listed and none is stale. Standby: the
  // apiserver answered a Lease call within one lease duration (it could take over).
  const ready = (): boolean => {
    if (elector?.isLeader()) {
      const current = active;
      if (!current?.caReady || !current.controller.synced()) return false;
      return Object.values(current.controller.staleSeconds()).every((s) => s < staleAfterS);
    }
    const contact = elector?.lastContact();
    return contact !== undefined && Date.now() - contact < leaseDurationMs;
  };
  new Gauge({
    name: "svc_operator_ready",
    help: "1 while /readyz answers 200.",
    registers: [registry],
    collect() {
      this.set(ready() ? 1 : 0);
    },
  });
  let diagnostics: Awaited<ReturnType<typeof startDiagnostics>> | undefined;
  if (opts.diagnosticsAddr) {
    const { host, port } = splitHostPort(opts.diagnosticsAddr);
    diagnostics = await startDiagnostics(registry, host, port, { ready });
  }
  new Gauge({
    name: "svc_operator_informer_stale_seconds",
    help: "Seconds each kind's informer has not been known current (0 while its watch is open; leader only).",
    labelNames: ["kind"],
    registers: [registry],
    collect() {
      this.reset();
      const current = active;
      if (!current) return;
      for (const [kind, s] of Object.entries(current.controller.staleSeconds())) this.set({ kind }, s);
    },
  });
  const stopActive = async () => {
    const current = active;
    active = undefined;
    metrics.leader.set(0);
    await current?.controller.stop();
  };

  const lead = async (signal: AbortSignal): Promise<void> => {
    metrics.leader.set(1);
    const state: { caReady: boolean; controller: Controller } = {
      caReady: false,
      controller: new Controller({
        kubeConfig,
        namespace,
        objects: new KubeObjectClient(kubeConfig, namespace),
        events: new KubeEventRecorder({
          kubeConfig,
          namespace,
          clock,
          instance: identity,
          onError: (err) => logger.warn({ err: err.message }, "could not record an event"),
        }),
        clock,
        logger,
        sessionRevoker,
        tokenUsage,
        caReady: () => state.caReady,
        metrics,
        ...(opts.resyncMs !== undefined ? { resyncMs: opts.resyncMs } : {}),
        ...(opts.recheckMs !== undefined ? { recheckMs: opts.recheckMs } : {}),
        ...(opts.presetRoles !== undefined ? { presetRoles: opts.presetRoles } : {}),
        ...(opts.finalizerTimeoutMs !== undefined ? { finalizerTimeoutMs: opts.finalizerTimeoutMs } : {}),
      }),
    };
    active = state;
    // CA Secrets before anything else; retried until they exist or leadership ends.
    for (let attempt = 1; !signal.aborted; attempt++) {
      try {
        const created = await ensureCas(caStore, {
          clusterName: opts.clusterName,
          trustDomain: opts.trustDomain ?? opts.clusterName,
          clock,
        });
        if (created.length > 0) logger.info({ created }, "created CA Secrets");
        state.caReady = true;
        break;
      } catch (err) {
        logger.error(
          { attempt, err: err instanceof Error ? err.message : String(err) },
          "CA Secrets not ready; retrying",
        );
        await sleep(Math.min(30_000, 500 * 2 ** Math.min(attempt - 1, 10)), signal);
      }
    }
    if (signal.aborted || active !== state) return;
    await state.controller.start(signal);
  };

  elector = new LeaderElector({
    kubeConfig,
    namespace,
    identity,
    logger,
    onStartedLeading: lead,
    onStoppedLeading: stopActive,
    ...(opts.leaseName ? { leaseName: opts.leaseName } : {}),
    ...(opts.leaseDurationMs !== undefined ? { leaseDurationMs: opts.leaseDurationMs } : {}),
    ...(opts.renewDeadlineMs !== undefined ? { renewDeadlineMs: opts.renewDeadlineMs } : {}),
    ...(opts.retryPeriodMs !== undefined ? { retryPeriodMs: opts.retryPeriodMs } : {}),
  });

  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((r) => {
    resolveDone = r;
  });
  let stopping: Promise<void> | undefined;
  const onSignal = () => void stop();
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (opts.handleSignals) {
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
      }
      await elector.stop(); // ends leadership (stopping the controller) and releases the Lease
      await stopActive();
      authClient?.close();
      await diagnostics?.close();
      logger.info({ identity }, "operator stopped");
      resolveDone();
    })();
    return stopping;
  };
  if (opts.handleSignals) {
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  }
  logger.info({ identity, namespace }, "operator starting; campaigning for leadership");
  elector.start();
  return {
    identity,
    diagnosticsPort: diagnostics?.port,
    isLeader: () => elector.isLeader(),
    isReconciling: () => active?.caReady === true,
    isReady: ready,
    stop,
    done,
  };
}
