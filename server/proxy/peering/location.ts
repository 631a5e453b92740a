// How a tunnel's proxy tells its agent where the tunnel ends, so the agent can report it in its
// heartbeats (auth stores it on the node; other replicas relay there). Over the tunnel's own
// HTTP/2 connection, where the proxy is the client: one POST with a small JSON body, answered 204.
// The agent keeps the last one until the tunnel closes.
import type http2 from "node:http2";
import { BadParameterError, UnavailableError } from "../../../core/errors.ts";
import type { TunnelLocation } from "../auth-client.ts";

export const LOCATION_PATH = "/v1/tunnel/location";
const MAX_BODY = 1024;

/** Proxy side: sends the location on a tunnel's session; resolves when the agent took it. */
export async function announceLocation(
  session: http2.ClientHttp2Session,
  location: TunnelLocation,
  timeoutMs = 10_000,
): Promise<void> {
  const body = JSON.stringify({ proxy_id: location.proxyId, peer_addr: location.peerAddr });
  const req = session.request({
    ":method": "POST",
    ":path": LOCATION_PATH,
    "content-type": "application/json",
  });
  req.setTimeout(timeoutMs, () => req.close(http2Cancel));
  await new Promise<void>((resolve, reject) => {
    req.once("response", (headers) => {
      const status = Number(headers[":status"]);
      req.resume();
      if (status === 204 || status === 200) resolve();
      else reject(new UnavailableError(`the agent refused the tunnel location (${status})`));
    });
    req.once("error", (err) =>
      reject(new UnavailableError("the tunnel location was not delivered", { cause: err })),
    );
    req.once("close", () => reject(new UnavailableError("the tunnel location was not delivered")));
    req.end(body);
  });
}

/** NGHTTP2_CANCEL: the location request is abandoned, not the session. */
const http2Cancel = 0x8;

/** Agent side: true for the location request (route it to readLocation). */
export function isLocationRequest(headers: http2.IncomingHttpHeaders): boolean {
  return headers[":method"] === "POST" && headers[":path"] === LOCATION_PATH;
}

/** Agent side: reads and answers the location request; rejects (and answers 400) on a bad one. */
export async function readLocation(stream: http2.ServerHttp2Stream): Promise<TunnelLocation> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) break;
    chunks.push(chunk);
  }
  try {
    if (size > MAX_BODY) throw new BadParameterError("tunnel location is too large");
    const v = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      proxy_id?: unknown;
      peer_addr?: unknown;
    };
    if (typeof v.proxy_id !== "string" || typeof v.peer_addr !== "string" || !v.proxy_id || !v.peer_addr)
      throw new BadParameterError("tunnel location needs proxy_id and peer_addr");
    if (!stream.destroyed) stream.respond({ ":status": 204 }, { endStream: true });
    return { proxyId: v.proxy_id, peerAddr: v.peer_addr };
  } catch (err) {
    if (!stream.destroyed) stream.respond({ ":status": 400 }, { endStream: true });
    throw err instanceof BadParameterError ? err : new BadParameterError("tunnel location is not JSON");
  }
}
