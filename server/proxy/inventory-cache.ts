// The proxy's copy of auth's inventory (docs/proxy-cache.md): every Role and User resource and
// every node, kept current by WatchInventory, so GET /v1/webapi/nodes and the terminal's per-node
// login decision are answered here instead of by a gRPC call per request. The decisions are auth's
// own code (queryNodes, authorizeNodeLogin, accessForUser) run on the same data; anything this copy
// cannot decide exactly as auth would (an SSO user, a disabled or role-locked user, roles that
// differ from the session's, a lock, an unknown lock state) goes to auth as before, and so does
// every request while the stream is down, not yet synced, or silent past three keepalives.
import type { Logger } from "pino";
import { Gauge, type Registry } from "prom-client";
import type { Clock } from "../../core/clock.ts";
import type { JsonObject } from "../../core/json.ts";
import { type LockRecord, lockCovering } from "../../core/locks/lock.ts";
import { type AccessChecker, accessForUser } from "../../core/rbac/index.ts";
import { API_VERSION, parseResource, type Role, type User } from "../../core/resources/index.ts";
import type { InventoryEvent__Output } from "../../proto/generated/svc/v1/InventoryEvent.ts";
import type { Node, Node__Output } from "../../proto/generated/svc/v1/Node.ts";
import { type Backoff, type FeedConnection, FeedSubscription } from "../auth/feed-subscription.ts";
import { authorizeNodeLogin } from "../auth/node-login.ts";
import { queryNodes } from "../auth/node-query.ts";
import type { NodeRecord } from "../auth/nodes.ts";
import { layered } from "./api-layers.ts";
import type { AuthApi, NodeInfo, NodePage, NodeQuery, RoleInfo, SessionInfo } from "./auth-client.ts";
import { sessionHash } from "./session-cache.ts";
import type { TerminalAuthApi } from "./terminal-auth.ts";

const DEFAULT_KEEPALIVE_SECONDS = 5;
/** The copy is not used once the stream was silent for this many keepalives (a half-open link). */
const STALE_KEEPALIVES = 3;
/** A session answer is used for the per-node decision only this soon after auth or the cache gave it. */
const SESSION_ANSWER_MS = 10_000;
const REMEMBERED_SESSIONS = 10_000;
/** Answered pages kept per checker (a console polls a few queries: first page, a filter). */
const PAGES_PER_CHECKER = 16;

/** The proxy's channel to auth as this cache needs it (its client and its "proxy:<name>" metadata). */
export type InventoryConnection = FeedConnection;

export interface InventoryCacheOptions {
  connection: () => InventoryConnection;
  clock: Clock;
  logger: Logger;
  /**
   * Locks in force as the proxy knows them (the trust feed's last snapshot), undefined while it
   * knows none: then every decision a lock could change goes to auth.
   */
  locks?: () => readonly LockRecord[] | undefined;
  /** reconnect backoff: first delay and cap (ms); defaults 250 ms and 5 s */
  backoff?: Backoff;
}

type Subject = Pick<SessionInfo, "username" | "roles" | "scope" | "mfaVerified">;

function roleOf(r: { name: string; spec_json: string }): Role {
  const res = parseResource({
    apiVersion: API_VERSION,
    kind: "Role",
    metadata: { name: r.name },
    spec: JSON.parse(r.spec_json),
  });
  if (res.kind !== "Role") throw new Error("not a Role");
  return res;
}

function userOf(u: { name: string; spec_json: string }): User {
  const res = parseResource({
    apiVersion: API_VERSION,
    kind: "User",
    metadata: { name: u.name },
    spec: JSON.parse(u.spec_json),
  });
  if (res.kind !== "User") throw new Error("not a User");
  return res;
}

function specOf(json: string): JsonObject {
  const v: unknown = json === "" ? {} : JSON.parse(json);
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new Error("role spec is not an object");
  return v as JsonObject;
}

function recordOf(n: Node__Output): NodeRecord {
  return {
    id: n.id,
    hostname: n.hostname,
    addresses: n.addresses,
    labels: n.labels,
    version: n.version,
    lastHeartbeat: new Date(Number(n.last_heartbeat_unix_ms)),
    online: n.status === "online",
    ...(n.tunnel?.proxy_id && n.tunnel.peer_addr
      ? { tunnel: { proxyId: n.tunnel.proxy_id, peerAddr: n.tunnel.peer_addr } }
      : {}),
  };
}

/** auth's Node as the proxy's AuthApi gives it (the same mapping as grpc-auth-api.ts). */
function nodeInfoOf(n: Node): NodeInfo {
  const last = Number(n.last_heartbeat_unix_ms ?? 0);
  return {
    id: n.id ?? "",
    hostname: n.hostname ?? "",
    addresses: n.addresses ?? [],
    labels: n.labels ?? {},
    status: n.status ?? "",
    ...(last > 0 ? { lastHeartbeat: new Date(last) } : {}),
    version: n.version ?? "",
    ...(n.logins ? { logins: n.logins } : {}),
    ...(n.tunnel?.proxy_id && n.tunnel.peer_addr
      ? { tunnel: { proxyId: n.tunnel.proxy_id, peerAddr: n.tunnel.peer_addr } }
      : {}),
  };
}

const sameRoles = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((r, i) => r === b[i]);

const INVENTORY = Symbol("svc.inventory");

/** The cache behind an AuthApi made by InventoryCache.serveAuthApi, if any (the nodes route). */
export function inventoryOf(api: object): InventoryCache | undefined {
  const v: unknown = Reflect.get(api, INVENTORY);
  return v instanceof InventoryCache ? v : undefined;
}

export class InventoryCache {
  readonly #o: InventoryCacheOptions;
  #roles = new Map<string, Role>();
  #roleList: RoleInfo[] = [];
  #users = new Map<string, User>();
  readonly #nodes = new Map<string, NodeRecord>();
  #nodeList: NodeRecord[] | undefined;
  /** Bumped on every applied change (nodes, roles, users): kept pages of an older one are not used. */
  #version = 0;
  #pages = new WeakMap<AccessChecker, Map<string, { version: number; page: NodePage }>>();
  /** AccessChecker per User object while the same Role objects resolve (as auth's checkerFor). */
  #checkers = new WeakMap<User, { roles: (Role | undefined)[]; checker: AccessChecker }>();
  readonly #sessions = new Map<string, { info: Subject; at: number }>();
  /** The entry set last (the last of #sessions while it is there) and the answer it was made from. */
  #newest: { key: string; info: SessionInfo; entry: { info: Subject; at: number } } | undefined;
  #synced = false;
  #lastMessageAt = 0;
  #keepaliveMs = DEFAULT_KEEPALIVE_SECONDS * 1000;
  readonly #stream: FeedSubscription<InventoryEvent__Output>;
  /** Answers given from the copy and answers left to auth (tests, diagnostics). */
  readonly served = { cache: 0, auth: 0 };
  /** Node entries received in "node" events (each heartbeat that changed something shown). */
  readonly received = { nodes: 0 };

  constructor(o: InventoryCacheOptions) {
    this.#o = o;
    this.#stream = new FeedSubscription({
      what: "inventory stream",
      open: () => {
        const c = this.#o.connection();
        return c.client.WatchInventory({}, c.metadata());
      },
      message: (e) => this.#apply(e),
      down: (err) => {
        if (this.#synced)
          this.#o.logger.warn({ err: err.message }, "inventory stream down: asking auth meanwhile");
        this.#synced = false;
      },
      backoff: o.backoff ?? { initialMs: 250, maxMs: 5_000 },
      logger: o.logger,
      now: () => this.#o.clock.now().getTime(),
      // A stream silent past STALE_KEEPALIVES keepalives (or its snapshot) is treated as dead and
      // opened again: synced and gone quiet, or never synced at all (a half-open connection during
      // the connect); either way the copy would never answer again without a new stream.
      watchdog: {
        periodMs: () => this.#keepaliveMs,
        check: () => {
          const silentMs =
            this.#o.clock.now().getTime() - Math.max(this.#lastMessageAt, this.#stream.openedAt);
          const dead = this.#synced ? !this.fresh() : silentMs > STALE_KEEPALIVES * this.#keepaliveMs;
          return this.#stream.open && dead ? new Error("inventory stream silent") : undefined;
        },
      },
    });
  }

  start(): void {
    this.#stream.start();
  }

  close(): void {
    this.#stream.stop();
    this.#synced = false;
  }

  /** Synced, and heard from auth within three keepalives: only then does it answer. */
  fresh(): boolean {
    return (
      this.#synced &&
      this.#o.clock.now().getTime() - this.#lastMessageAt <= STALE_KEEPALIVES * this.#keepaliveMs
    );
  }

  /** Nodes held now (diagnostics, tests). */
  get nodeCount(): number {
    return this.#nodes.size;
  }

  /**
   * ListNodes for this session's user from the copy, exactly as auth answers it (same code);
   * undefined when auth must answer (see the file's head). Throws auth's errors for a bad query.
   */
  listNodes(info: Subject, q: NodeQuery): NodePage | undefined {
    const checker = this.#checker(info);
    if (!checker) return undefined;
    // The same question on the same data has the same answer: a page is kept per checker (the
    // user's roles as they are now) and query until the inventory changes. Shared: read-only.
    const key = JSON.stringify([q.search, q.labels, q.status, q.limit, q.startKey, q.withLogins]);
    let pages = this.#pages.get(checker);
    const hit = pages?.get(key);
    if (hit && hit.version === this.#version) {
      this.served.cache++;
      return hit.page;
    }
    const res = queryNodes(this.#records(), checker, {
      search: q.search ?? "",
      labels: q.labels ?? "",
      status: q.status ?? "",
      limit: q.limit,
      start_key: q.startKey ?? "",
      with_logins: q.withLogins ?? false,
    });
    const page: NodePage = {
      items: (res.nodes ?? []).map(nodeInfoOf),
      nextKey: res.next_key ?? "",
      totalCount: Number(res.total_count ?? 0),
    };
    if (!pages) {
      pages = new Map();
      this.#pages.set(checker, pages);
    }
    pages.delete(key);
    pages.set(key, { version: this.#version, page });
    if (pages.size > PAGES_PER_CHECKER) {
      const oldest = pages.keys().next().value;
      if (oldest !== undefined) pages.delete(oldest);
    }
    this.served.cache++;
    return page;
  }

  /**
   * The nodes route: the copy's answer for this session's user, else `ask` (auth; through
   * serveAuthApi's listNodes, which counts it).
   */
  async answerNodes(info: Subject, q: NodeQuery, ask: () => Promise<NodePage>): Promise<NodePage> {
    return this.listNodes(info, q) ?? ask();
  }

  /**
   * AuthorizeNodeLogin from the copy (auth's authorizeNodeLogin, then its node-lock check);
   * undefined when auth must decide. Throws NotFoundError / AccessDeniedError as auth does.
   */
  authorizeNodeLogin(info: Subject, hostname: string, login: string): NodeInfo | undefined {
    const checker = this.#checker(info);
    if (!checker) return undefined;
    const records = this.#records();
    // A host name the copy has never seen may be a node that joined on another replica since the
    // last scan: auth decides (and says "unknown node" when it is). Hidden nodes stay answered here.
    if (hostname !== "" && !records.some((n) => n.hostname === hostname)) return undefined;
    const node = authorizeNodeLogin({ hostname, login }, checker, records);
    // A locked node: auth refuses with the lock's own message; let it say so.
    const locks = this.#o.locks?.();
    if (!locks || lockCovering(locks, { node: node.id ?? "" }, this.#o.clock.now())) return undefined;
    this.served.cache++;
    return nodeInfoOf(node);
  }

  /**
   * ListRoles from the copy when this session's user may list roles (the admin capability
   * "roles:list", decided by the same checker); undefined when auth must answer (it refuses).
   */
  listRoles(info: Subject): RoleInfo[] | undefined {
    const checker = this.#checker(info);
    if (!checker?.can("roles", "list")) return undefined;
    this.served.cache++;
    return this.#roleList;
  }

  /**
   * The web API's AuthApi with ListNodes and ListRoles answered here when they can be, and every session answer
   * remembered (by digest) for serveTerminalAuth's decisions. Everything else is `api` as is.
   */
  serveAuthApi(api: AuthApi): AuthApi {
    const getSession = async (sessionId: string): Promise<SessionInfo> => {
      // Before the await: inside the request's withSessionDigest, the digest is handed down.
      const key = sessionHash(sessionId);
      const info = await api.getSession(sessionId);
      this.#remember(key, info);
      return info;
    };
    const listNodes = async (sessionId: string, q: NodeQuery): Promise<NodePage> => {
      const info = this.#recalled(sessionId);
      const page = info ? this.listNodes(info, q) : undefined;
      if (page) return page;
      this.served.auth++;
      return api.listNodes(sessionId, q);
    };
    const listRoles = async (sessionId: string): Promise<RoleInfo[]> => {
      const info = this.#recalled(sessionId);
      const roles = info ? this.listRoles(info) : undefined;
      if (roles) return roles;
      this.served.auth++;
      return api.listRoles(sessionId);
    };
    return layered(api, { [INVENTORY]: this, getSession, listNodes, listRoles });
  }

  /** The terminal's API with the per-node login decision made here when it can be. */
  serveTerminalAuth(api: TerminalAuthApi): TerminalAuthApi {
    const authorize = async (sessionId: string, hostname: string, login: string): Promise<NodeInfo> => {
      const info = this.#recalled(sessionId);
      const node = info ? this.authorizeNodeLogin(info, hostname, login) : undefined;
      if (node) return node;
      this.served.auth++;
      return api.authorizeNodeLogin(sessionId, hostname, login);
    };
    return layered(api, { authorizeNodeLogin: authorize });
  }

  /** `key`: sessionHash of the session id (a bearer secret: only its digest is kept). */
  #remember(key: string, info: SessionInfo): void {
    // The same answer object for the entry set last (the session cache hands one out while it
    // holds): only its time moves, no delete and set on the Map.
    const newest = this.#newest;
    if (newest?.key === key && newest.info === info && this.#sessions.get(key) === newest.entry) {
      newest.entry.at = Date.now();
      return;
    }
    this.#sessions.delete(key);
    const { username, roles, scope, mfaVerified } = info;
    const entry = { info: { username, roles, scope, mfaVerified }, at: Date.now() };
    this.#sessions.set(key, entry);
    this.#newest = { key, info, entry };
    if (this.#sessions.size > REMEMBERED_SESSIONS) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest !== undefined) this.#sessions.delete(oldest);
    }
  }

  /** The session's user as answered for this request (routes check the session first). */
  #recalled(sessionId: string): Subject | undefined {
    const hit = this.#sessions.get(sessionHash(sessionId));
    return hit && Date.now() - hit.at <= SESSION_ANSWER_MS ? hit.info : undefined;
  }

  /** The checker auth's ListNodes / AuthorizeNodeLogin would use, or undefined: ask auth. */
  #checker(info: Subject): AccessChecker | undefined {
    if (!this.fresh()) return undefined;
    // An enrolment-only session may call nothing but enrolment (auth's interceptor refuses it).
    if (info.scope !== "full") return undefined;
    // Resource users only: an SSO user's record lives in auth's backend.
    const user = this.#users.get(info.username);
    if (!user || user.spec.disabled) return undefined;
    // The session's roles are what auth said for this request; a difference means a change is
    // on its way to one side: auth decides until both agree.
    if (!sameRoles(user.spec.roles, info.roles)) return undefined;
    const locks = this.#o.locks?.();
    if (!locks || lockCovering(locks, { user: info.username, roles: user.spec.roles }, this.#o.clock.now()))
      return undefined;
    const roles = user.spec.roles.map((r) => this.#roles.get(r));
    const hit = this.#checkers.get(user);
    let checker: AccessChecker;
    if (hit && hit.roles.length === roles.length && hit.roles.every((r, i) => r === roles[i])) {
      checker = hit.checker;
    } else {
      const byName = new Map(user.spec.roles.map((r, i) => [r, roles[i]]));
      checker = accessForUser(user, (r) => byName.get(r)).checker;
      this.#checkers.set(user, { roles, checker });
    }
    // A role-locked user has no session at auth (401 there); roles that now require MFA make a
    // session without it enrolment-only (403 there): auth says so.
    const options = checker.options();
    if (options.locked || (options.requireMfa && !info.mfaVerified)) return undefined;
    return checker;
  }

  #records(): NodeRecord[] {
    this.#nodeList ??= [...this.#nodes.values()];
    return this.#nodeList;
  }

  // ---- the stream ---------------------------------------------------------------------------

  #apply(e: InventoryEvent__Output): void {
    // Events before the first snapshot of this stream are already in it.
    if (!this.#synced && e.kind !== "snapshot") return;
    try {
      switch (e.kind) {
        case "snapshot":
          this.#setRoles(e);
          this.#nodes.clear();
          for (const n of e.nodes) this.#nodes.set(n.id, recordOf(n));
          this.#nodeList = undefined;
          if (!this.#synced) this.#o.logger.info({ nodes: this.#nodes.size }, "inventory synced");
          this.#synced = true;
          this.#stream.healthy();
          break;
        case "roles":
          this.#setRoles(e);
          break;
        case "node":
          for (const n of e.nodes) this.#nodes.set(n.id, recordOf(n));
          this.received.nodes += e.nodes.length;
          this.#nodeList = undefined;
          break;
        case "node_removed":
          for (const id of e.removed_node_ids) this.#nodes.delete(id);
          this.#nodeList = undefined;
          break;
        default:
          break; // keepalive, or a kind this proxy does not know (nothing to apply)
      }
    } catch (err) {
      // A copy that may differ from auth's must not answer: resync from a new snapshot.
      this.#o.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        "inventory event refused",
      );
      this.#stream.lost(new Error("inventory event refused"));
      return;
    }
    if (e.kind !== "keepalive") this.#version++;
    if (e.keepalive_seconds > 0) this.#keepaliveMs = e.keepalive_seconds * 1000;
    this.#lastMessageAt = this.#o.clock.now().getTime();
  }

  #setRoles(e: InventoryEvent__Output): void {
    // Built aside and swapped whole: a bad entry leaves the previous set (and the stream resyncs).
    const deleting = new Set(e.deleting_roles);
    // What ListRoles answers: every role, by name, its spec as auth stored it.
    const list = e.roles
      .map((r) => ({ name: r.name, spec: specOf(r.spec_json) }))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    // What decides: a role being deleted grants nothing (as accessForUser), so it is left out.
    const roles = new Map(e.roles.filter((r) => !deleting.has(r.name)).map((r) => [r.name, roleOf(r)]));
    const users = new Map(e.users.map((u) => [u.name, userOf(u)]));
    this.#roleList = list;
    this.#roles = roles;
    this.#users = users;
    this.#checkers = new WeakMap();
  }
}

/**
 * The proxy role's inventory copy: WatchInventory on the proxy's connection, with the locks of
 * its trust stream (unknown while that stream is down, so lock-dependent decisions go to auth).
 */
export function startInventoryCache(o: {
  connection: () => InventoryConnection;
  trust: { connected(): boolean; current(): { locks: readonly LockRecord[] } | undefined };
  clock: Clock;
  logger: Logger;
  /** The proxy's registry: svc_proxy_inventory_* */
  metrics?: Registry;
}): InventoryCache {
  const cache = new InventoryCache({
    connection: o.connection,
    clock: o.clock,
    logger: o.logger,
    locks: () => (o.trust.connected() ? o.trust.current()?.locks : undefined),
  });
  if (o.metrics) {
    new Gauge({
      name: "svc_proxy_inventory_fresh",
      help: "1 while the inventory copy answers (WatchInventory synced and heard from within 3 keepalives)",
      registers: [o.metrics],
      collect() {
        this.set(cache.fresh() ? 1 : 0);
      },
    });
    new Gauge({
      name: "svc_proxy_inventory_nodes",
      help: "Nodes in the proxy's inventory copy",
      registers: [o.metrics],
      collect() {
        this.set(cache.nodeCount);
      },
    });
    new Gauge({
      name: "svc_proxy_inventory_answers",
      help: "Node lists, role lists and per-node login decisions since start, by who answered (copy or auth)",
      labelNames: ["by"],
      registers: [o.metrics],
      collect() {
        this.set({ by: "copy" }, cache.served.cache);
        this.set({ by: "auth" }, cache.served.auth);
      },
    });
  }
  cache.start();
  return cache;
}
