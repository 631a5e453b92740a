// Run by server/proxy/plugins/security-headers.test.ts as
// `node --allow-natives-syntax <this file> [svc|fastify]`: fills the transitions of V8's
// empty-object hidden class first (3,000 objects whose first property names differ, as start-up
// fills them in svcd), then answers three requests and prints whether the last two replies'
// header objects share a hidden class. "svc" uses the plugin; "fastify" copies the same headers in
// with `reply.headers`, fastify's own way. Kept under test/: the image ships server/ without tests.
import Fastify, { type FastifyReply } from "fastify";
import {
  computeSecurityHeaders,
  replyHeaderObject,
  securityHeadersPlugin,
} from "../server/proxy/plugins/security-headers.ts";

const haveSameMap = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;
const filled: object[] = [];
for (let i = 0; i < 3000; i++) {
  const o: Record<string, number> = {};
  o[`fill-${i}`] = i;
  filled.push(o);
}

const publicUrl = "https://proxy.example.test";
const mode = process.argv[2] ?? "svc";
const app = Fastify();
if (mode === "svc") await app.register(securityHeadersPlugin, { publicUrl });
else {
  const headers = computeSecurityHeaders(publicUrl);
  app.addHook("onRequest", (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
}
const seen: object[] = [];
app.get("/", (_request, reply: FastifyReply) => {
  const h = replyHeaderObject(reply);
  if (h !== undefined) seen.push(h);
  return { ok: true };
});
for (let i = 0; i < 3; i++) {
  const res = await app.inject("/");
  if (res.headers["x-frame-options"] !== "DENY" && mode === "svc") throw new Error("headers missing");
}
await app.close();
const [, a, b] = seen;
process.stdout.write(
  `${JSON.stringify({ replies: seen.length, shared: a && b ? haveSameMap(a, b) : null, filled: filled.length })}\n`,
);
