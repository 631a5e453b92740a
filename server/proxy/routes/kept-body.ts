// Bodies kept with the answers they were made from. The proxy's caches hand out the same object
// while nothing changed (the session cache its SessionInfo, the inventory copy its node pages and
// role list), so the JSON made from it by the route's own response serializer (byte for byte what
// fastify would send) is made once and kept beside it, weakly: it goes with the object.
import type { FastifyReply } from "fastify";

export class KeptBodies<K extends object> {
  // Kept as UTF-8 bytes, not a string: a string body is measured (Buffer.byteLength), joined to
  // the head and encoded again on every send, ~10 KB each time for a nodes page.
  readonly #bodies = new WeakMap<K, Buffer>();

  /** Sends the body kept for `answer`, made by `view` and the route's serializer the first time. */
  send(reply: FastifyReply, answer: K, view: (answer: K) => unknown): FastifyReply {
    let body = this.#bodies.get(answer);
    if (body === undefined) {
      const out = reply.serialize(view(answer));
      body = typeof out === "string" ? Buffer.from(out, "utf8") : Buffer.from(out as Uint8Array);
      this.#bodies.set(answer, body);
    }
    // Bytes with a JSON type are sent as they are (the serializer already ran).
    return reply.type("application/json; charset=utf-8").send(body);
  }
}
