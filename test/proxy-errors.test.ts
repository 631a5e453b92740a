// One error shape for every 4xx and 5xx, the framework's own included (404, 405 with Allow, 413,
// 414, 415, 431, malformed URL/JSON/HTTP), each declared in the OpenAPI document; and a refused
// upload still gets its answer instead of a dropped TLS connection. Real HTTPS to a real proxy.
import { connect } from "node:tls";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../core/clock.ts";
import { buildProxyApp } from "../server/proxy/app.ts";
import { GrpcCliAuthApi } from "../server/proxy/cli-auth-api.ts";
import { MAX_URL_LENGTH } from "../server/proxy/plugins/error-handler.ts";
import { recordingRoutes } from "../server/proxy/recordings-route.ts";
import { passwordResetRoutes } from "../server/proxy/routes/password-reset.ts";
import { userCertRoutes } from "../server/proxy/routes/user-certs.ts";
import { commonErrors } from "../server/proxy/schemas.ts";
import { GrpcTerminalAuthApi } from "../server/proxy/terminal-auth.ts";
import { terminalRoutes } from "../server/proxy/terminal-route.ts";
import { webRoutes } from "../web/serve.ts";
import {
  PASSWORD,
  type ProxyFixture,
  PUBLIC_HOST,
  requestsWhileClosing,
  startProxyFixture,
  USERS,
} from "./proxy-fixture.ts";
import type { HttpResponse } from "./proxy-https-client.ts";

let fx: ProxyFixture;
let bearer: Record<string, string>;
let doc: OpenApiDoc;

interface Operation {
  security?: unknown[];
  requestBody?: unknown;
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
}
interface OpenApiDoc {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}
interface JsonSchema {
  $ref?: string;
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
}

beforeAll(async () => {
  fx = await startProxyFixture();
  const login = await fx.client.send({
    method: "POST",
    path: "/v1/webapi/login",
    body: { username: USERS.admin, password: PASSWORD },
  });
  expect(login.status, login.text).toBe(200);
  bearer = { authorization: `Bearer ${(login.json as { session_id: string }).session_id}` };
  doc = (await fx.client.send({ path: "/v1/webapi/openapi.json" })).json as OpenApiDoc;
});
afterAll(async () => {
  await fx?.close();
});

function resolve(s: JsonSchema | undefined): JsonSchema | undefined {
  if (s?.$ref === undefined) return s;
  const name = s.$ref.split("/").pop() ?? "";
  return resolve(doc.components?.schemas?.[name]);
}

/** The error body `{"error": {"code", "message"}}`, alone or as one branch of a union. */
function isErrorSchema(s: JsonSchema | undefined): boolean {
  const r = resolve(s);
  if (r === undefined) return false;
  const branches = r.anyOf ?? r.oneOf;
  if (branches !== undefined) return branches.every((b) => isErrorSchema(b));
  const inner = resolve(r.properties?.["error"]);
  return (
    r.type === "object" &&
    (r.required ?? []).includes("error") &&
    inner?.type === "object" &&
    ["code", "message"].every(
      (k) => (inner.required ?? []).includes(k) && inner.properties?.[k]?.type === "string",
    )
  );
}

function expectErrorBody(res: HttpResponse, status: number, code?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(String(res.headers["content-type"])).toMatch(/^application\/json/);
  const body = res.json as { error?: { code?: unknown; message?: unknown } };
  expect(Object.keys(body)).toEqual(["error"]);
  expect(typeof body.error?.code).toBe("string");
  expect(typeof body.error?.message).toBe("string");
  if (code !== undefined) expect(body.error?.code).toBe(code);
}

/** What a route's OpenAPI entry declares for `status`. */
function declared(path: string, method: string, status: number): boolean {
  const op = doc.paths[path]?.[method.toLowerCase()];
  return isErrorSchema(op?.responses?.[String(status)]?.content?.["application/json"]?.schema);
}

/** One request over a fresh TLS connection, bytes as given; resolves with what came back. */
function rawExchange(request: Buffer): Promise<string> {
  const url = new URL(fx.proxy.url);
  return new Promise((resolveText, reject) => {
    const socket = connect(
      { host: url.hostname, port: Number(url.port), ca: fx.hostCaPem, servername: PUBLIC_HOST },
      () => socket.end(request),
    );
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => resolveText(Buffer.concat(chunks).toString("utf8")));
  });
}

/** Every route of `d`: a success, and each error status it can answer, with the error schema. */
function walk(d: OpenApiDoc): number {
  const saved = doc;
  doc = d;
  try {
    const ops = Object.entries(d.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ path, method, op })),
    );
    for (const { path, method, op } of ops) {
      const where = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(op.responses ?? {});
      // A success, or the 302 of a route a browser navigates through (the SSO steps).
      expect(
        statuses.some((s) => s.startsWith("2") || s === "302"),
        `${where} declares no success`,
      ).toBe(true);
      const required = new Set(commonErrors);
      if (op.security !== undefined) required.add(401);
      // CSRF refusals (cookie credentials) on every state-changing authenticated route
      if (op.security !== undefined && method !== "get") required.add(403);
      for (const s of required) expect(statuses, `${where} lacks ${s}`).toContain(String(s));
      for (const s of statuses.filter((x) => Number(x) >= 400)) {
        expect(declared(path, method, Number(s)), `${where} ${s} is not the error schema`).toBe(true);
      }
    }
    return ops.length;
  } finally {
    doc = saved;
  }
}

describe("the OpenAPI document", () => {
  it("declares, on every route, a success and each error status it can answer with the error schema", () => {
    expect(walk(doc)).toBeGreaterThan(20);
  });

  it("so does every route svcd adds (recordings, password reset, terminal, web pages)", async () => {
    // Clients are built but never called: only the routes' schemas are read.
    const grpc = {
      address: fx.auth.address,
      caPems: [fx.hostCaPem],
      certPem: fx.proxyTls.certPem,
      keyPem: fx.proxyTls.keyPem,
    };
    const terminalAuth = new GrpcTerminalAuthApi(grpc);
    const cliAuthApi = new GrpcCliAuthApi(grpc);
    const app = await buildProxyApp({
      config: fx.config,
      tls: fx.proxyTls,
      authApi: fx.authApi,
      logger: pino({ level: "silent" }),
      ready: () => true,
      resources: fx.source,
      routes: [
        terminalRoutes({ terminalAuth, clock: systemClock }),
        recordingRoutes({ terminalAuth }),
        webRoutes(),
        passwordResetRoutes({ api: cliAuthApi }),
        userCertRoutes({ api: cliAuthApi }),
      ],
    });
    try {
      await app.ready();
      const full = app.swagger() as unknown as OpenApiDoc;
      expect(Object.keys(full.paths)).toEqual(
        expect.arrayContaining(["/v1/webapi/sessions/{id}/recording", "/v1/webapi/password/reset"]),
      );
      expect(walk(full)).toBeGreaterThan(walk(doc));
    } finally {
      await app.close();
      terminalAuth.close();
      cliAuthApi.close();
    }
  });
});

describe("the framework's own errors use the error body and are declared", () => {
  it("unknown route: 404", async () => {
    expectErrorBody(await fx.client.send({ path: "/v1/webapi/nope" }), 404, "not_found");
  });

  it("a known path with another method: 405 with Allow", async () => {
    for (const [method, path, allow] of [
      ["PUT", "/v1/webapi/login", "POST"],
      ["GET", "/v1/webapi/logout", "POST"],
      ["DELETE", "/v1/webapi/session", "GET, HEAD"],
      ["POST", "/v1/webapi/mfa/devices/abc", "DELETE, PATCH"],
      // fastify reads a QUERY's body before routing and wants a Content-Type: still 405.
      ["QUERY", "/v1/webapi/users", "GET, HEAD"],
    ] as const) {
      const res = await fx.client.send({ method, path, headers: bearer });
      expectErrorBody(res, 405, "method_not_allowed");
      expect(res.headers["allow"], `${method} ${path}`).toBe(allow);
    }
  });

  it("body over the limit: 413", async () => {
    const res = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/ssh/certs",
      headers: bearer,
      body: { public_key: "x".repeat(100 * 1024) },
    });
    expectErrorBody(res, 413, "body_too_large");
    expect(declared("/v1/webapi/ssh/certs", "post", 413)).toBe(true);
  });

  it("URL too long: 414 (whole URL or one path segment); request head over 16 KiB: 431", async () => {
    const longQuery = await fx.client.send({
      path: `/v1/webapi/sessions?user=${"a".repeat(MAX_URL_LENGTH)}`,
      headers: bearer,
    });
    expectErrorBody(longQuery, 414, "uri_too_long");
    expect(declared("/v1/webapi/sessions", "get", 414)).toBe(true);
    const longSegment = await fx.client.send({
      method: "DELETE",
      path: `/v1/webapi/mfa/devices/${"a".repeat(2000)}`,
      headers: bearer,
    });
    expectErrorBody(longSegment, 414, "uri_too_long");
    const bigHead = await fx.client.send({
      path: "/v1/webapi/ping",
      headers: { "x-filler": "a".repeat(20_000) },
    });
    expectErrorBody(bigHead, 431, "headers_too_large");
    expect(declared("/v1/webapi/ping", "get", 431)).toBe(true);
  });

  it("malformed JSON, URL and HTTP: 400", async () => {
    const badJson = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/ssh/certs",
      headers: { ...bearer, "content-type": "application/json" },
      raw: '{"public_key": ',
    });
    expectErrorBody(badJson, 400, "bad_parameter");
    const invalidUtf8 = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/ssh/certs",
      headers: { ...bearer, "content-type": "application/json" },
      raw: Buffer.concat([
        Buffer.from('{"public_key":"ssh-ed25519 '),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}'),
      ]),
    });
    expectErrorBody(invalidUtf8, 400, "bad_parameter");
    expectErrorBody(
      await fx.client.send({ method: "DELETE", path: "/v1/webapi/mfa/devices/%E0%A4%A", headers: bearer }),
      400,
      "bad_parameter",
    );
    const text = await rawExchange(
      Buffer.from(
        `GET /v1/webapi/ping HTTP/1.1\r\nhost: ${PUBLIC_HOST}\r\nx-bad: a\u0001b\r\n\r\n`,
        "latin1",
      ),
    );
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4))).toEqual({
      error: { code: "bad_parameter", message: "malformed HTTP request" },
    });
  });

  it("a body that is not JSON (text/plain included): 415", async () => {
    for (const contentType of ["text/plain", "application/x-www-form-urlencoded", "application/xml"]) {
      const res = await fx.client.send({
        method: "POST",
        path: "/v1/webapi/ssh/certs",
        headers: { ...bearer, "content-type": contentType },
        raw: "public_key=x",
      });
      expectErrorBody(res, 415, "unsupported_media_type");
    }
    expect(declared("/v1/webapi/ssh/certs", "post", 415)).toBe(true);
  });
});

/**
 * As most HTTP libraries do: the head, then the body in 16 KiB writes, and only then the answer.
 * A write that fails (the proxy closed the connection under the upload) is how such a client
 * sees the connection drop, even when the answer had arrived.
 */
function uploadThenRead(head: string, body: Buffer): Promise<string> {
  const url = new URL(fx.proxy.url);
  return new Promise((resolveText) => {
    const chunks: Buffer[] = [];
    let uploaded = false;
    let settled = false;
    const done = (text: string) => {
      if (settled) return;
      settled = true;
      resolveText(text);
      socket.destroy();
    };
    const answer = (): string | undefined => {
      const text = Buffer.concat(chunks).toString("utf8");
      const end = text.indexOf("\r\n\r\n");
      const length = /content-length: (\d+)/i.exec(text.slice(0, Math.max(end, 0)));
      return end >= 0 && length && Buffer.byteLength(text.slice(end + 4)) >= Number(length[1])
        ? text
        : undefined;
    };
    const writeFrom = async (offset: number): Promise<void> => {
      for (let at = offset; at < body.length; at += 16 * 1024) {
        const err = await new Promise<Error | null | undefined>((r) =>
          socket.write(body.subarray(at, at + 16 * 1024), r),
        );
        if (err || socket.destroyed) return done(`upload failed at byte ${at}: ${err?.message ?? "closed"}`);
      }
      uploaded = true;
      const text = answer();
      if (text !== undefined) done(text);
    };
    const socket = connect(
      { host: url.hostname, port: Number(url.port), ca: fx.hostCaPem, servername: PUBLIC_HOST },
      () => {
        socket.write(head);
        // the body once the proxy has had time to answer from the head alone
        setTimeout(() => void writeFrom(0), 50);
      },
    );
    socket.on("data", (c: Buffer) => {
      chunks.push(c);
      const text = answer();
      if (uploaded && text !== undefined) done(text);
    });
    socket.on("error", (err) => done(`connection error: ${err.message}`));
    socket.on("close", () =>
      done(uploaded ? Buffer.concat(chunks).toString("utf8") : "closed during the upload"),
    );
  });
}

describe("a refused upload keeps its answer", () => {
  // Before: the proxy closed the socket on 413 with the rest of the body unread; the kernel
  // then reset the connection and a client still uploading saw the TLS connection drop.
  it("POST /v1/webapi/ssh/certs with bodies far over the limit answers 413 every time", async () => {
    const auth = bearer["authorization"] ?? "";
    for (const size of [200 * 1024, 1024 * 1024, 4 * 1024 * 1024]) {
      for (const connection of ["keep-alive", "close"]) {
        const body = Buffer.concat([
          Buffer.from('{"public_key":"'),
          Buffer.alloc(size, "\u4e00"),
          Buffer.from('"}'),
        ]);
        const head =
          `POST /v1/webapi/ssh/certs HTTP/1.1\r\nhost: ${PUBLIC_HOST}\r\nauthorization: ${auth}\r\n` +
          `content-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: ${connection}\r\n\r\n`;
        const text = await uploadThenRead(head, body);
        expect(text.split("\r\n")[0], `${size} bytes, ${connection}`).toBe("HTTP/1.1 413 Payload Too Large");
        expect(text).toContain('{"error":{"code":"body_too_large","message":"request body too large"}}');
      }
    }
  });
});

describe("while the proxy closes", () => {
  it("a request arriving on an open connection gets 503 in the error body", async () => {
    const own = await startProxyFixture();
    try {
      const text = await requestsWhileClosing(own);
      expect(text).toMatch(/^HTTP\/1\.1 401 /);
      const second = text.slice(text.indexOf("HTTP/1.1", 10));
      expect(second.split("\r\n")[0]).toBe("HTTP/1.1 503 Service Unavailable");
      expect(second).toContain('{"error":{"code":"unavailable","message":"the proxy is shutting down"}}');
    } finally {
      await own.close();
    }
  });
});
