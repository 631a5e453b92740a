// Pieces the standalone auth and proxy roles share: the resource source the config names, the
// kubeconfig, paths relative to the data folder, ordered shutdown, and patient retries.
import { isAbsolute, resolve } from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import { Gauge, type Registry } from "prom-client";
import { parseDuration } from "../../core/duration.ts";
import { RESOURCE_KINDS } from "../../core/resources/index.ts";
import { FolderSource } from "../../core/sources/folder.ts";
import { loadKubeConfig } from "../../core/sources/kube-api.ts";
import { KubernetesSource } from "../../core/sources/kubernetes.ts";
import { WithPresetRoles } from "../../core/sources/preset-roles.ts";
import type { ResourceSource, ResourceWriter } from "../../core/sources/source.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../logger.ts";

/** A path from the config: relative ones are relative to data_dir (else the working folder). */
export function configPath(config: Config, path: string): string {
  return isAbsolute(path) ? path : resolve(config.data_dir ?? ".", path);
}

/** The kubeconfig of the role: `source.kubeconfig`, else $KUBECONFIG, ~/.kube/config or in-cluster. */
export function roleKubeConfig(config: Config): KubeConfig {
  return loadKubeConfig(config.source.type === "kubernetes" ? config.source.kubeconfig : undefined);
}

/** The source the config names, started (not necessarily synced). */
export async function startSource(
  config: Config,
  kubeConfig: () => KubeConfig,
  logger: Logger,
): Promise<ResourceSource & ResourceWriter> {
  const source =
    config.source.type === "kubernetes"
      ? new KubernetesSource({
          kubeConfig: kubeConfig(),
          namespace: config.source.namespace,
          onProblem: (p) =>
            logger.warn({ problem: p }, "resource refused; it grants nothing (last good version kept)"),
          onWatchError: (kind, err) => logger.warn({ kind, err: err.message }, "list/watch failed; retrying"),
        })
      : new FolderSource({
          dir: configPath(config, config.source.path),
          onProblem: (p) =>
            logger.warn({ problem: p }, "manifest problem; the last good version stays in force"),
        });
  await source.start();
  // With preset roles on, auth and proxy count admin/access as existing, as the operator does.
  return config.source.type === "kubernetes" && config.source.preset_roles
    ? new WithPresetRoles(source)
    : source;
}

/**
 * Whether the source is current enough to decide from: every kind known current within
 * `source.stale_after` (a folder source never goes stale).
 */
export function sourceFresh(config: Config, source: Pick<ResourceSource, "staleSeconds">): boolean {
  if (config.source.type !== "kubernetes") return true;
  const limit = parseDuration(config.source.stale_after) / 1000;
  return Object.values(source.staleSeconds?.() ?? {}).every((s) => s < limit);
}

/**
 * svc_source_synced (1 once the resource cache is complete) and svc_source_objects{kind} (objects
 * in the cache that decisions see), so propagation can be watched from outside.
 */
export function sourceGauges(
  registry: Registry,
  source: Pick<ResourceSource, "synced" | "list" | "staleSeconds">,
): void {
  new Gauge({
    name: "svc_source_stale_seconds",
    help: "seconds each kind's informer has not been known current (0 while its watch is open)",
    labelNames: ["kind"],
    registers: [registry],
    collect() {
      for (const [kind, s] of Object.entries(source.staleSeconds?.() ?? {})) this.set({ kind }, s ?? 0);
    },
  });
  new Gauge({
    name: "svc_source_synced",
    help: "1 once every kind of the resource source has been listed",
    registers: [registry],
    collect() {
      this.set(source.synced() ? 1 : 0);
    },
  });
  new Gauge({
    name: "svc_source_objects",
    help: "objects in the resource cache that access decisions see, per kind",
    labelNames: ["kind"],
    registers: [registry],
    collect() {
      for (const kind of RESOURCE_KINDS) this.set({ kind }, source.list(kind).length);
    },
  });
}

/** Stops in reverse order of start; one failure does not keep the others running. */
export class Closers {
  readonly #fns: Array<() => Promise<void> | void> = [];
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  add(fn: () => Promise<void> | void): void {
    this.#fns.push(fn);
  }

  async close(): Promise<void> {
    for (const fn of this.#fns.splice(0).reverse()) {
      try {
        await fn();
      } catch (err) {
        this.#logger.warn({ err }, "error while stopping");
      }
    }
  }
}

/**
 * Runs `attempt` until it succeeds, with capped exponential backoff (0.5 s doubling to 10 s).
 * For things another component provides at its own pace (the operator's CA Secrets, a mounted
 * Secret). Rejects when the signal aborts.
 */
export async function retryUntil<T>(
  what: string,
  attempt: () => Promise<T>,
  o: { logger: Logger; signal: AbortSignal; maxDelayMs?: number },
): Promise<T> {
  for (let failures = 0; ; failures++) {
    o.signal.throwIfAborted();
    try {
      return await attempt();
    } catch (err) {
      if (o.signal.aborted) throw o.signal.reason;
      const delay = Math.min(o.maxDelayMs ?? 10_000, 500 * 2 ** Math.min(failures, 10));
      // The first failure and then every tenth: patient without flooding the log.
      if (failures % 10 === 0) {
        o.logger.warn(
          { err: err instanceof Error ? err.message : String(err), retryInMs: delay },
          `waiting for ${what}`,
        );
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, delay);
        o.signal.addEventListener(
          "abort",
          () => {
            clearTimeout(t);
            resolve();
          },
          { once: true },
        );
      });
    }
  }
}
