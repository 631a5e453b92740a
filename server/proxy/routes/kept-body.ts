// Bodies kept with the answers they were made from. The proxy's caches hand out the same object
// while nothing changed (the session cache its SessionInfo, the inventory copy its node pages and
// role list), so the JSON made from it by the route's own response serializer (byte for byte what
// fastify would send) is made once and kept beside it, weakly: it goes with the object.
import type { FastifyReply } from "fastify";

export class KeptBodies<K extends object> {
  readonly #bodies = new WeakMap<K, string>();

  /** Sends the body kept for `answer`, made by `view` and the route's serializer the first time. */
  send(reply: FastifyReply, answer: K, view: (answer: K) => unknown): FastifyReply {
    let body = this.#bodies.get(answer);
    if (body === undefined) {
      const out = reply.serialize(view(answer));
      body = typeof out === "string" ? out : Buffer.from(out as Uint8Array).toString("utf8");
      this.#bodies.set(answer, body);
    }
    // A string with a JSON type is sent as it is (the serializer already ran).
    return reply.type("application/json; charset=utf-8").send(body);
  }
}
