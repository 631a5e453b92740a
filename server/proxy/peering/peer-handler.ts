// The holder's side of svc-peer: the router hands over sockets whose ClientHello offered
// ALPN svc-peer; they are terminated here with the proxy's identity (TLS 1.3, client certificate
// from the host CA required, and it must be a proxy's), then spoken to as an HTTP/2 server. Each
// CONNECT stream names a node; it is relayed into this proxy's own tunnel to that node, and only
// that: never onwards to another peer, so a stale location cannot make proxies loop.
import http2 from "node:http2";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import tls from "node:tls";
import type { Logger } from "../../logger.ts";
import { isProxyClientCertificate } from "./identity.ts";
import { nodeIdOfAuthority, PEER_ALPN, PEER_REASON_HEADER, splice } from "./protocol.ts";

export interface PeerTlsMaterial {
  /** the proxy identity's server certificate and key */
  certPem: string;
  keyPem: string;
  /** host CA certificate(s) a peer's client certificate must chain to */
  caPems: readonly string[];
}

export interface PeerHandlerOptions {
  tls: PeerTlsMaterial;
  /** a stream to the node through THIS proxy's tunnel, or undefined when it holds none */
  localDial(nodeId: string): Promise<Duplex> | undefined;
  logger: Logger;
  /** TLS handshake budget (default 10 s) */
  handshakeTimeoutMs?: number;
}

export interface PeerHandler {
  /** what the router calls for a socket that offered ALPN svc-peer (ClientHello still unread) */
  handle(socket: Socket): void;
  /** the identity was renewed */
  setTls(material: PeerTlsMaterial): void;
  /** ends every peer connection */
  close(): void;
}

function secureContextOptions(m: PeerTlsMaterial): tls.SecureContextOptions {
  return { cert: m.certPem, key: m.keyPem, ca: [...m.caPems], minVersion: "TLSv1.3" };
}

export function createPeerHandler(o: PeerHandlerOptions): PeerHandler {
  const log = o.logger.child({ component: "proxy-peering" });
  // A tls.Server that never listens: it does the handshake, chain check and ALPN for sockets the
  // router emits into it, exactly as the HTTPS server does for the web port.
  const server = tls.createServer({
    ...secureContextOptions(o.tls),
    requestCert: true,
    rejectUnauthorized: true,
    ALPNProtocols: [PEER_ALPN],
    handshakeTimeout: o.handshakeTimeoutMs ?? 10_000,
  });
  const h2 = http2.createServer();
  const live = new Set<Duplex>();
  // The tls.Server does not close a socket whose handshake failed or timed out: we do, or a
  // client that sends its hello and then nothing holds the connection forever.
  server.on("tlsClientError", (err, socket) => {
    log.debug({ err: err.message }, "peer TLS handshake failed");
    socket.destroy();
  });
  server.on("secureConnection", (socket: tls.TLSSocket) => {
    if (socket.alpnProtocol !== PEER_ALPN || !isProxyClientCertificate(socket.getPeerX509Certificate())) {
      log.warn({ remote: socket.remoteAddress }, "svc-peer refused: the client is not a proxy");
      socket.destroy();
      return;
    }
    live.add(socket);
    socket.once("close", () => live.delete(socket));
    h2.emit("connection", socket);
  });
  h2.on("stream", (stream, headers) => {
    const refuse = (status: number, reason: string): void => {
      if (!stream.destroyed)
        stream.respond({ ":status": status, [PEER_REASON_HEADER]: reason }, { endStream: true });
    };
    const nodeId = headers[":method"] === "CONNECT" ? nodeIdOfAuthority(headers[":authority"]) : undefined;
    if (!nodeId) {
      refuse(400, "bad-request");
      return;
    }
    const dialing = o.localDial(nodeId);
    if (!dialing) {
      refuse(404, "no-tunnel");
      return;
    }
    dialing.then(
      (conn) => {
        if (stream.destroyed) {
          conn.destroy();
          return;
        }
        stream.respond({ ":status": 200 });
        splice(stream, conn);
      },
      (err: unknown) => {
        log.debug(
          { nodeId, err: err instanceof Error ? err.message : String(err) },
          "peer relay: tunnel dial failed",
        );
        refuse(502, "tunnel-failed");
      },
    );
  });
  h2.on("sessionError", (err) => log.debug({ err: err.message }, "peer HTTP/2 session failed"));

  return {
    handle(socket) {
      server.emit("connection", socket);
    },
    setTls(material) {
      server.setSecureContext(secureContextOptions(material));
    },
    close() {
      for (const s of live) s.destroy();
      live.clear();
      server.close();
      h2.close();
    },
  };
}
