// Operator metrics (prom-client), registered on the registry the diagnostics listener serves:
// reconciles by kind and result, their duration, the queue's backlog, and whether this process
// leads (so an alert can fire when no replica does).
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export class OperatorMetrics {
  readonly reconciles: Counter<"kind" | "result">;
  readonly reconcileSeconds: Histogram<"kind">;
  readonly queueBusy: Gauge;
  readonly leader: Gauge;
  readonly finalizersSkipped: Counter<"kind" | "finalizer">;

  constructor(registry: Registry) {
    this.reconciles = new Counter({
      name: "svc_operator_reconciles_total",
      help: "Reconciles by kind and result (ok, error).",
      labelNames: ["kind", "result"],
      registers: [registry],
    });
    this.reconcileSeconds = new Histogram({
      name: "svc_operator_reconcile_duration_seconds",
      help: "Time one reconcile took, by kind.",
      labelNames: ["kind"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    this.queueBusy = new Gauge({
      name: "svc_operator_queue_busy",
      help: "Keys waiting in or being processed by the work queue.",
      registers: [registry],
    });
    this.finalizersSkipped = new Counter({
      name: "svc_operator_finalizer_skipped_total",
      help: "Finalizers removed although their work kept failing (bounded retries ran out).",
      labelNames: ["kind", "finalizer"],
      registers: [registry],
    });
    this.leader = new Gauge({
      name: "svc_operator_leader",
      help: "1 while this process holds the leader Lease.",
      registers: [registry],
    });
  }
}
