// `svcd agent`: the node daemon. Joins once (token + CA pin/file), then on every start: serves SSH
// with its host certificate, trusts the user CA keys auth publishes, heartbeats its labels, records
// every session (asciicast v2) and uploads it, and reports sessions to the audit log.

import { connect, createServer } from "node:net";
import { hostname as osHostname } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "pino";
import { parseOpenSshPrivateKey } from "../../core/certs/ssh-keys.ts";
import { type Clock, systemClock } from "../../core/clock.ts";
import { BadParameterError, hasCode } from "../../core/errors.ts";
import { agentMetadata, callUnary, firstAuthAddress, waitForReady } from "../auth/client.ts";
import type { AuthRoute } from "../auth/via-proxy.ts";
import { SERVER_VERSION } from "../version.ts";
import { auditRequestOf, userOfKeyId } from "./audit.ts";
import { agentAuthRoute, sameStoredRoute, storedRouteOf } from "./auth-target.ts";
import { AgentCredentials, expiredIdentityMessage, identityValidity } from "./credentials.ts";
import { type AgentIdentity, IDENTITY_FILE, loadIdentity, saveIdentity } from "./identity.ts";
import { joinCluster } from "./join.ts";
import { KrlFile } from "./krl-file.ts";
import { type AgentTrust, startAgentTrust } from "./locks.ts";
import { SessionRecorder } from "./recorder.ts";
import { RenewalLoop, type RenewalPolicy } from "./renewal.ts";
import { RotationFollower } from "./rotation-follow.ts";
import { AgentSshServer, type AgentSshServerOptions, type SessionSink } from "./ssh-server.ts";
import {
  type AgentTunnelOptions,
  agentTunnel,
  heartbeatTunnelField,
  type TunnelClient,
} from "./tunnel-client.ts";
import { uploadAndRemove, uploadPending } from "./upload.ts";

export interface AgentOptions {
  /** auth's gRPC address, "host:port" (or proxyAddress; neither: the route stored at join) */
  authAddress?: string;
  /** TLS name in auth's certificate when it differs from the address host (with authAddress) */
  authServerName?: string;
  /** the proxy's public "host:port": auth is reached through it (auth-target.ts) */
  proxyAddress?: string;
  /** first join only: "sha256:<hex>" pin of the host CA (printed with the token) */
  caPin?: string;
  /** first join only: PEM file of the host CA (instead of a pin) */
  caFile?: string;
  /** first join only: "<name>.<secret>"; ignored once the agent has credentials */
  token?: string;
  /** credentials (0600) and recordings waiting for upload */
  dataDir: string;
  /** SSH listen address "host:port"; default "0.0.0.0:3022"; port 0 picks a free port */
  listen?: string;
  /**
   * address the proxy dials, "host:port"; default the listen address, where an unspecified host
   * (0.0.0.0, ::) becomes the local IP this node reaches auth from
   */
  advertiseAddress?: string;
  /** advertised labels; default the ones given at join (auth adds the token's node_labels) */
  labels?: Record<string, string>;
  /** default os.hostname(); fixed at join */
  hostname?: string;
  logger: Logger;
  clock?: Clock;
  /** overrides auth's heartbeat interval hint (tests) */
  heartbeatIntervalSeconds?: number;
  /** passed to the SSH server (tests) */
  ssh?: Pick<AgentSshServerOptions, "lookupUser" | "processUid" | "sessionPath" | "onSessionOpened">;
  /**
   * Serve SSH through a reverse tunnel to the proxy (docs/tunnels.md). `proxyAddress` defaults to
   * the proxy auth is reached through (proxyAddress above). With a tunnel and no `listen`, the
   * agent listens on no port and advertises no address (unless advertiseAddress says one).
   */
  tunnel?: AgentTunnelOptions;
  /** diagnostics listener "host:port" (/healthz with the trust snapshot's age, /readyz, /metrics) */
  diagListen?: string;
  /** when to renew the node's certificates (renewal.ts; tests shorten it) */
  renewal?: Partial<RenewalPolicy>;
  /** keep auth's OpenSSH KRL (ExportKrl) in this file for a local sshd's RevokedKeys (krl-file.ts) */
  krlFile?: string;
}

export type { AgentTunnelOptions };

export interface RunningAgent {
  agentId: string;
  hostname: string;
  /** where SSH listens */
  ssh: { host: string; port: number };
  /** what auth was told to dial (none for a tunnel-only agent) */
  addresses: string[];
  /** the reverse tunnel, when running with one */
  tunnel?: TunnelClient;
  /** how this agent reaches auth (directly, or through the proxy's public port) */
  authRoute: AuthRoute;
  /** true when this start redeemed a token */
  joined: boolean;
  /** the WatchTrust feed and lock enforcement (docs/locks.md) */
  trust: AgentTrust;
  /** the live identity and auth client (renewed in place, docs/agent.md "Renewal") */
  credentials: AgentCredentials;
  /** the renewal schedule (next(), renewNow()) */
  renewal: RenewalLoop;
  /** sends one heartbeat now (also refreshes the user CA keys) */
  heartbeat(): Promise<void>;
  /** stops heartbeating, ends SSH connections, finishes pending uploads and audit events */
  close(): Promise<void>;
}

/** "k=v,k2=v2" (the `--labels` flag) -> a label map; "" -> {}. */
export function parseLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(",")) {
    const item = part.trim();
    if (item === "") continue;
    const eq = item.indexOf("=");
    if (eq <= 0) throw new BadParameterError(`label ${JSON.stringify(item.slice(0, 64))} must be key=value`);
    out[item.slice(0, eq).trim()] = item.slice(eq + 1).trim();
  }
  return out;
}

function splitHostPort(s: string, what: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(s) ?? /^([^:]*):(\d{1,5})$/.exec(s);
  if (!m || Number(m[2]) > 65535) throw new BadParameterError(`${what} must be host:port`);
  return { host: m[1] || "0.0.0.0", port: Number(m[2]) };
}

const joinHostPort = (host: string, port: number): string =>
  host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;

const UNSPECIFIED_HOSTS = new Set(["0.0.0.0", "::"]);

/**
 * The local IP of a TCP connection to auth: the address auth sees this node call from (and so one
 * the proxy, next to auth, can dial), unless a NAT sits in between. Undefined when auth cannot be
 * reached now. With several auth addresses (a list of replicas), the first one's route.
 */
export async function localIpToward(authAddress: string, timeoutMs = 5000): Promise<string | undefined> {
  let target: { host: string; port: number };
  try {
    target = splitHostPort(firstAuthAddress(authAddress), "auth address");
  } catch {
    return undefined;
  }
  return new Promise((resolve) => {
    const socket = connect({ host: target.host, port: target.port, timeout: timeoutMs });
    const done = (ip?: string): void => {
      socket.destroy();
      resolve(ip ? ip.replace(/^::ffff:/, "") : undefined);
    };
    socket.once("connect", () => done(socket.localAddress));
    socket.once("error", () => done());
    socket.once("timeout", () => done());
  });
}

async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** When the identity's certificates expired, or undefined while they are valid. */
function expiredAt(identity: AgentIdentity, clock: Clock): Date | undefined {
  const { validBefore } = identityValidity(identity);
  return validBefore.getTime() <= clock.now().getTime() ? validBefore : undefined;
}

export async function runAgent(opts: AgentOptions): Promise<RunningAgent> {
  const log = opts.logger;
  const clock = opts.clock ?? systemClock;
  const listen = splitHostPort(opts.listen ?? "0.0.0.0:3022", "listen");
  let identity = await loadIdentity(opts.dataDir);
  // Expired certificates cannot renew (auth refuses the handshake): only a new join helps.
  const expired = identity ? expiredAt(identity, clock) : undefined;
  if (identity && expired) {
    if (!opts.token) throw new BadParameterError(expiredIdentityMessage(opts.dataDir, expired));
    log.warn(
      { agentId: identity.agentId, expired: expired.toISOString() },
      "the stored identity has expired: joining again with the given token",
    );
  }
  const route = await agentAuthRoute(
    {
      ...(opts.authAddress ? { authAddress: opts.authAddress } : {}),
      ...(opts.authServerName ? { authServerName: opts.authServerName } : {}),
      ...(opts.proxyAddress ? { proxyAddress: opts.proxyAddress } : {}),
    },
    identity,
    log,
  );
  // A tunnel agent needs no port of its own: it listens only when asked to.
  const listening = opts.tunnel === undefined || opts.listen !== undefined;
  // The advertised address must carry the real port before the join, so port 0 is resolved first.
  if (listening && listen.port === 0) listen.port = await freePort(listen.host);
  const addresses =
    listening || opts.advertiseAddress !== undefined
      ? [opts.advertiseAddress ?? joinHostPort(listen.host, listen.port)]
      : [];
  if (addresses[0] !== undefined) splitHostPort(addresses[0], "advertise address");
  // Listening on every interface says nothing about where the node can be reached: advertise the
  // IP it reaches auth from instead, until then (auth down) the join's peer address stands in.
  let unresolved = listening && opts.advertiseAddress === undefined && UNSPECIFIED_HOSTS.has(listen.host);
  const resolveAdvertised = async (): Promise<void> => {
    if (!unresolved) return;
    const ip = await localIpToward(route.address);
    if (ip === undefined) return;
    addresses[0] = joinHostPort(ip, listen.port);
    unresolved = false;
  };
  await resolveAdvertised();

  let joined = false;
  if (!identity || expired) {
    if (!opts.token) throw new BadParameterError("this agent has not joined yet: a join token is required");
    identity = await joinCluster({
      authAddress: route.address,
      ...(route.serverName ? { authServerName: route.serverName } : {}),
      ...(opts.caPin ? { caPin: opts.caPin } : {}),
      ...(opts.caFile ? { caFile: opts.caFile } : {}),
      token: opts.token,
      // A re-join after expiry keeps the node's name (auth frees it from the expired node).
      hostname: opts.hostname ?? identity?.hostname ?? osHostname(),
      addresses,
      labels: opts.labels ?? identity?.labels ?? {},
    });
    identity = { ...identity, ...storedRouteOf(route) };
    await saveIdentity(opts.dataDir, identity);
    joined = true;
    log.info({ agentId: identity.agentId, hostname: identity.hostname }, "joined the cluster");
  } else if (opts.hostname && opts.hostname !== identity.hostname) {
    log.warn(
      { stored: identity.hostname },
      "hostname option ignored: an agent keeps the hostname it joined with",
    );
  }
  if (!joined && !sameStoredRoute(storedRouteOf(route), identity)) {
    // A flag named another way to auth (or the proxy's auth name changed): remember it.
    const { proxyAddress: _p, authAddress: _a, authServerName: _n, ...rest } = identity;
    identity = { ...rest, ...storedRouteOf(route) };
    await saveIdentity(opts.dataDir, identity);
  }
  const id = identity;
  const node = { id: id.agentId, hostname: id.hostname };
  const labels = opts.labels ?? id.labels ?? {};

  // Every call takes the client in force: a renewal rebuilds it with the new certificate.
  const credentials = new AgentCredentials({
    identity: id,
    route: { address: route.address, ...(route.serverName ? { serverName: route.serverName } : {}) },
    dataDir: opts.dataDir,
    logger: log,
    clock,
  });
  const client = () => credentials.client();
  const md = () => agentMetadata(id.agentId);
  let userCaKeys = id.userCaSshPublicKeys;

  // Background work (audit emits, uploads) is tracked so close() can wait for it.
  const inflight = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    inflight.add(p);
    void p.finally(() => inflight.delete(p)).catch(() => undefined);
    return p;
  };
  const emit = (req: Parameters<typeof auditRequestOf>[0], extra: { recordingId?: string } = {}) =>
    track(
      // waitForReady: an event raised while auth restarts is delivered once it is back (30 s).
      callUnary(client(), "EmitAuditEvent", auditRequestOf(req, node, extra), waitForReady(md()), {
        deadline: Date.now() + 30_000,
      }).catch((err: unknown) =>
        log.warn(
          {
            err: err instanceof Error ? err.message : String(err),
            type: req.type,
            ...("reason" in req ? { reason: req.reason } : {}),
          },
          "audit emit failed",
        ),
      ),
    );

  // Per session: resolves with the recording id once auth has the recording (undefined if not).
  const recordingDone = new Map<
    string,
    { promise: Promise<string | undefined>; resolve: (v: string | undefined) => void }
  >();
  const recordingsDir = join(opts.dataDir, "recordings");
  const recorder = new SessionRecorder({
    dir: recordingsDir,
    clock,
    logger: log,
    userOf: (info) => userOfKeyId(info.keyId),
    onFailed: (sessionId) => recordingDone.get(sessionId)?.resolve(undefined),
    onFinished: (meta) => {
      const done = recordingDone.get(meta.id);
      track(
        uploadAndRemove(client(), md, recordingsDir, meta, log).then(
          (ok) => done?.resolve(ok ? meta.id : undefined),
          () => done?.resolve(undefined),
        ),
      );
    },
  });

  // Set after the first heartbeat; logins before it are decided by auth alone.
  let trust: AgentTrust | undefined;
  const server = new AgentSshServer({
    hostKey: parseOpenSshPrivateKey(id.hostKeyOpenSsh).privateKey,
    hostCertificate: id.hostCertificate,
    trustedUserCaKeys: () => userCaKeys,
    // Locks this node holds refuse at once; auth's AuthorizeSshLogin below is the second check.
    refuseLocally: (q) => trust?.locks.check(q),
    // Fails closed: when auth cannot be asked, no new login is accepted (docs/rbac.md).
    authorizeLogin: async (q) => {
      try {
        await callUnary(
          client(),
          "AuthorizeSshLogin",
          { ssh_certificate: q.certificateLine, login: q.login, remote_address: q.remoteAddress },
          waitForReady(md()),
          // waitForReady: right after auth or the proxy restarts the channel may still be in its
          // reconnect backoff; the login waits for it (within the deadline) instead of failing.
          { deadline: Date.now() + 10_000 },
        );
      } catch (err) {
        // callUnary gives core/errors types carrying auth's message.
        throw new Error(`auth refused the login: ${err instanceof Error ? err.message : "unknown error"}`);
      }
    },
    clock,
    logger: log,
    ...(opts.ssh ?? {}),
    observer: {
      start: (info): SessionSink => {
        let resolve: (v: string | undefined) => void = () => {};
        const promise = new Promise<string | undefined>((r) => {
          resolve = r;
        });
        recordingDone.set(info.sessionId, { promise, resolve });
        return recorder.start(info);
      },
    },
    audit: (e) => {
      if (e.type !== "session.end") {
        void emit(e);
        return;
      }
      // session.end names the recording, so it waits for the upload (bounded).
      const done = recordingDone.get(e.sessionId);
      const timeout = delay(120_000, undefined, { ref: false });
      void track(
        Promise.race([done?.promise ?? Promise.resolve(undefined), timeout]).then((recordingId) => {
          recordingDone.delete(e.sessionId);
          return emit(e, recordingId ? { recordingId } : {});
        }),
      );
    },
  });
  const bound = listening ? await server.listen(listen.port, listen.host) : { host: "", port: 0 };
  const tunnel = opts.tunnel
    ? agentTunnel({
        options: opts.tunnel,
        ...(route.proxy ? { proxyAddress: route.proxy } : {}),
        identity: () => credentials.identity(),
        onStream: (stream, remote) => server.accept(stream, remote),
        // Other proxy replicas find the tunnel through auth: tell it at once.
        onLocation: () => void track(heartbeat().catch(() => undefined)),
        logger: log,
      })
    : undefined;

  const heartbeat = async (): Promise<void> => {
    await resolveAdvertised();
    const res = await callUnary(
      client(),
      "Heartbeat",
      {
        hostname: id.hostname,
        addresses,
        labels,
        version: SERVER_VERSION,
        ...heartbeatTunnelField(tunnel),
      },
      md(),
    );
    // The user CA may rotate: the trust snapshot carries its keys; polled only until one arrived.
    if (!trust?.watcher.current()) {
      const pub = await callUnary(client(), "GetPublicKeys", {}, md()).catch(() => undefined);
      if (pub?.user_ca_ssh_public_keys && pub.user_ca_ssh_public_keys.length > 0)
        userCaKeys = pub.user_ca_ssh_public_keys;
    }
    intervalMs = (opts.heartbeatIntervalSeconds ?? res.interval_seconds ?? 30) * 1000;
    trust?.watcher.reconnectNow();
  };
  let intervalMs = (opts.heartbeatIntervalSeconds ?? 30) * 1000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const uploading = () => new Set(recordingDone.keys());
  const tick = async (): Promise<void> => {
    try {
      await heartbeat();
      await uploadPending(client(), md, recordingsDir, log, uploading());
    } catch (err) {
      if (
        hasCode(err, "not_authenticated") &&
        err instanceof Error &&
        /node has been removed/.test(err.message)
      ) {
        // svcctl nodes rm: auth refuses every call with this identity, so no login is admitted
        // here either. Only a new join (new token, new identity) brings the node back.
        log.error(
          { agentId: id.agentId, dataDir: opts.dataDir },
          `this node has been removed from the cluster: remove ${join(opts.dataDir, IDENTITY_FILE)} and join again with a new token`,
        );
      } else log.warn({ err: err instanceof Error ? err.message : String(err) }, "heartbeat failed");
    }
    if (!stopped) timer = setTimeout(() => void track(tick()), intervalMs);
  };
  await track(tick());
  // After the first heartbeat (auth knows this node): locks and published CA keys, pushed.
  trust = await startAgentTrust({
    client,
    metadata: md,
    server,
    nodeId: id.agentId,
    clock,
    logger: log,
    ...(opts.diagListen !== undefined ? { diagListen: opts.diagListen } : {}),
  });
  trust.watcher.on("snapshot", (s) => {
    if (s.publicKeys.user_ca_ssh_public_keys.length > 0) userCaKeys = s.publicKeys.user_ca_ssh_public_keys;
    // Auth's TLS roots follow a host X.509 rotation too (kept on failure; renewal also brings them).
    void credentials
      .adoptHostCas(s.publicKeys.host_ca_pems)
      .catch((err: unknown) =>
        log.warn(
          { err: err instanceof Error ? err.message : String(err) },
          "could not save the new host CAs",
        ),
      );
  });
  // A new snapshot (locks or CA keys changed) may change the KRL: fetch it then.
  const krlFile = opts.krlFile
    ? new KrlFile({
        path: opts.krlFile,
        fetch: () => callUnary(client(), "ExportKrl", {}, md(), { deadline: Date.now() + 10_000 }),
        logger: log,
      })
    : undefined;
  if (krlFile) {
    trust.watcher.on("snapshot", () => void krlFile.onSnapshot());
    krlFile.start();
  }
  // Renewal: new SSH connections get the new host certificate, new calls and tunnel connections
  // the new client certificate; sessions and calls already open keep theirs.
  credentials.on("renewed", (next: AgentIdentity) => {
    server.setHostIdentity(parseOpenSshPrivateKey(next.hostKeyOpenSsh).privateKey, next.hostCertificate);
    if (next.userCaSshPublicKeys.length > 0 && !trust?.watcher.current())
      userCaKeys = next.userCaSshPublicKeys;
  });
  const renewal = new RenewalLoop({
    identity: () => credentials.identity(),
    renew: () => credentials.renew(),
    dataDir: opts.dataDir,
    logger: log,
    clock,
    ...(opts.renewal ? { policy: opts.renewal } : {}),
  });
  renewal.start();
  // A host CA rotation in update_servers asks for certificates from the new key at once.
  const follower = new RotationFollower({
    certificates: () => credentials.identity(),
    renewNow: (reason) => renewal.renewNow(reason),
    logger: log,
  });
  trust.watcher.on("snapshot", (s) => void follower.onAuthorities(s.authorities));
  log.info({ renewAt: renewal.next()?.toISOString() }, "node certificate renewal scheduled");
  // After the first heartbeat: the proxy admits only nodes auth knows.
  tunnel?.start();
  log.info({ agentId: id.agentId, ssh: bound, addresses }, "agent serving SSH");

  return {
    agentId: id.agentId,
    hostname: id.hostname,
    ssh: bound,
    addresses,
    authRoute: route,
    ...(tunnel ? { tunnel } : {}),
    joined,
    trust,
    credentials,
    renewal,
    heartbeat,
    async close() {
      stopped = true;
      if (timer) clearTimeout(timer);
      renewal.stop();
      await trust?.close();
      await krlFile?.close();
      await tunnel?.close();
      await server.close();
      // Let sessions that just ended finish uploading and auditing (bounded by their own timeouts).
      while (inflight.size > 0) await Promise.allSettled([...inflight]);
      credentials.close();
    },
  };
}
