// The other side of svc-peer: reach a node whose tunnel ends at another proxy replica. One TLS +
// HTTP/2 connection per peer address is kept and shared by all dials; each dial is a CONNECT
// stream. The address is the agent's claim, so the connection is only used when the far end
// proves to be a proxy: its server certificate chains to the host CA and names the proxies'
// shared public name, and it agrees on ALPN svc-peer. Anything else (auth, an arbitrary service)
// fails the handshake and the caller sees "node unreachable".
import http2 from "node:http2";
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import tls from "node:tls";
import { UnavailableError } from "../../../core/errors.ts";
import type { Logger } from "../../logger.ts";
import type { TunnelLocation } from "../auth-client.ts";
import { PEER_ALPN, PEER_REASON_HEADER, peerAuthority, splitPeerAddr } from "./protocol.ts";

export interface PeerClientTls {
  /** the proxy identity's client certificate (URI SAN svc://proxy/<name>) and key */
  certPem: string;
  keyPem: string;
  caPems: readonly string[];
  /** the name a peer's server certificate must carry (identity.ts peerServerName) */
  peerServerName: string;
}

export interface PeerDialerOptions {
  /** this replica's id: a location naming it is never dialled (we are the holder) */
  selfId: string;
  /** read on every new connection, so a renewed identity is used from then on */
  tls: () => PeerClientTls;
  logger: Logger;
  /** TLS connect + CONNECT answer budget (default 10 s) */
  timeoutMs?: number;
}

export class PeerDialer {
  readonly #o: PeerDialerOptions;
  readonly #sessions = new Map<string, Promise<http2.ClientHttp2Session>>();
  #closed = false;

  constructor(o: PeerDialerOptions) {
    this.#o = o;
  }

  /** True when `location` names another replica this dialer would try. */
  handles(location: TunnelLocation | undefined): location is TunnelLocation {
    return Boolean(location?.peerAddr) && location?.proxyId !== this.#o.selfId;
  }

  /** A byte stream to the node through the replica holding its tunnel. */
  async dial(location: TunnelLocation, nodeId: string): Promise<Duplex> {
    if (this.#closed) throw new UnavailableError("proxy is stopping");
    const timeoutMs = this.#o.timeoutMs ?? 10_000;
    const session = await this.#session(location.peerAddr);
    const stream = session.request({ ":method": "CONNECT", ":authority": peerAuthority(nodeId) });
    return new Promise<Duplex>((resolve, reject) => {
      const timer = setTimeout(
        () => fail(new UnavailableError("node unreachable: the peer proxy did not answer")),
        timeoutMs,
      );
      const fail = (err: Error): void => {
        clearTimeout(timer);
        stream.destroy();
        reject(err);
      };
      stream.once("response", (headers) => {
        clearTimeout(timer);
        const status = Number(headers[":status"]);
        if (status === 200) {
          stream.removeAllListeners("error");
          stream.on("error", () => {}); // the caller watches close; a reset must not crash
          resolve(stream);
          return;
        }
        const reason = String(headers[PEER_REASON_HEADER] ?? status);
        fail(new UnavailableError(`node unreachable: the peer proxy holds no tunnel to it (${reason})`));
      });
      stream.once("error", (err) =>
        fail(new UnavailableError("node unreachable: the peer relay failed", { cause: err })),
      );
      stream.once("close", () => fail(new UnavailableError("node unreachable: the peer relay closed")));
    });
  }

  close(): void {
    this.#closed = true;
    for (const s of this.#sessions.values())
      void s.then(
        (x) => x.destroy(),
        () => {},
      );
    this.#sessions.clear();
  }

  #session(peerAddr: string): Promise<http2.ClientHttp2Session> {
    const existing = this.#sessions.get(peerAddr);
    if (existing) return existing;
    const created = this.#connect(peerAddr);
    this.#sessions.set(peerAddr, created);
    const forget = (): void => {
      if (this.#sessions.get(peerAddr) === created) this.#sessions.delete(peerAddr);
    };
    created.then((s) => {
      s.once("close", forget);
      s.once("goaway", forget);
    }, forget);
    return created;
  }

  async #connect(peerAddr: string): Promise<http2.ClientHttp2Session> {
    let target: { host: string; port: number };
    try {
      target = splitPeerAddr(peerAddr);
    } catch {
      throw new UnavailableError("node unreachable: its tunnel location is not host:port");
    }
    const m = this.#o.tls();
    if (!m.peerServerName) throw new UnavailableError("node unreachable: this proxy has no peer identity");
    const socket = await new Promise<tls.TLSSocket>((resolve, reject) => {
      const s = tls.connect({
        host: target.host,
        port: target.port,
        ca: [...m.caPems],
        cert: m.certPem,
        key: m.keyPem,
        minVersion: "TLSv1.3",
        ALPNProtocols: [PEER_ALPN],
        ...(isIP(m.peerServerName) ? {} : { servername: m.peerServerName }),
        // The address is where the agent says the tunnel is; the name we require is the proxies'.
        checkServerIdentity: (_host, cert) => tls.checkServerIdentity(m.peerServerName, cert),
        timeout: this.#o.timeoutMs ?? 10_000,
      });
      const fail = (err: Error): void => {
        s.destroy();
        this.#o.logger.warn({ peerAddr, err: err.message }, "peer proxy refused or unreachable");
        reject(new UnavailableError("node unreachable: its tunnel's proxy could not be reached as a proxy"));
      };
      s.once("error", fail);
      s.once("timeout", () => fail(new Error("TLS handshake timed out")));
      s.once("secureConnect", () => {
        if (s.alpnProtocol !== PEER_ALPN) {
          fail(new Error(`the server did not agree on ALPN ${PEER_ALPN}`));
          return;
        }
        s.setTimeout(0);
        s.removeAllListeners("error");
        s.removeAllListeners("timeout");
        s.setNoDelay(true);
        resolve(s);
      });
    });
    const session = http2.connect(`https://${peerAddr}`, {
      createConnection: () => socket,
      settings: { enablePush: false },
    });
    session.on("error", (err) => this.#o.logger.debug({ peerAddr, err: err.message }, "peer session failed"));
    // An idle relay connection costs nothing to keep, but must not hold the process open.
    socket.unref();
    return session;
  }
}
