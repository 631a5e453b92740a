// The app hosts' HTTP/1.1 parsing as an attacker would probe it, on raw TLS connections with a valid
// app session (docs/apps.md): a request whose length is ambiguous (Content-Length with
// Transfer-Encoding, two lengths, an encoding that is not chunked last) is refused and closes the
// connection, so a second request hidden in its body never reaches the app; a chunked body reaches
// it whole; CONNECT and absolute-form targets are not forwarded; a WebSocket opened by a page of
// another origin (another app host is the same site) is refused.
import { connect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type AppsPlatform, PUBLIC_HOST, startAppsPlatform, USERS } from "./proxy-apps-kit.ts";

let kit: AppsPlatform;
let cookie: string;

beforeAll(async () => {
  kit = await startAppsPlatform();
  cookie = await kit.appSession(await kit.login(USERS.dev), "httpbin");
}, 180_000);

afterAll(async () => {
  await kit?.close();
}, 60_000);

/** Writes `raw` on a new TLS connection to the app host and reads until the proxy closes it. */
function exchange(raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const host = kit.hostOf("httpbin");
    const s = connect({ host: "127.0.0.1", port: kit.port, servername: host, ca: kit.platform.hostCaPem });
    let got = "";
    const timer = setTimeout(() => s.destroy(), 5_000);
    s.setEncoding("utf8");
    s.on("data", (d: string) => {
      got += d;
    });
    s.once("secureConnect", () => s.write(raw));
    s.once("close", () => {
      clearTimeout(timer);
      resolve(got);
    });
    s.once("error", (err) => {
      clearTimeout(timer);
      if (got !== "") resolve(got);
      else reject(err);
    });
  });
}

const head = () =>
  `Host: ${kit.hostOf("httpbin")}:${kit.port}\r\nCookie: __Host-svc_app_session=${cookie}\r\n`;
/** A request the app would answer 200 to, hidden in a body: it must never be answered. */
const smuggled = () => `GET /anything/smuggled HTTP/1.1\r\n${head()}\r\n`;
const statusLines = (text: string) => [...text.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));

describe("ambiguous request lengths", () => {
  const cases: Array<[string, (body: string) => string]> = [
    [
      "Content-Length with Transfer-Encoding: chunked",
      (body) =>
        `POST /anything HTTP/1.1\r\n${head()}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${body}`,
    ],
    [
      "two different Content-Lengths",
      (body) => `POST /anything HTTP/1.1\r\n${head()}Content-Length: 0\r\nContent-Length: 9\r\n\r\n${body}`,
    ],
    [
      "a Transfer-Encoding that does not end in chunked",
      (body) =>
        `POST /anything HTTP/1.1\r\n${head()}Transfer-Encoding: chunked, identity\r\nContent-Length: 0\r\n\r\n${body}`,
    ],
    [
      "an obfuscated Transfer-Encoding",
      (body) =>
        `POST /anything HTTP/1.1\r\n${head()}Transfer-Encoding: xchunked\r\nContent-Length: 0\r\n\r\n${body}`,
    ],
    [
      "a header folded onto the next line",
      (body) =>
        `POST /anything HTTP/1.1\r\n${head()}Content-Length: 0\r\nX-A: a\r\n Transfer-Encoding: chunked\r\n\r\n${body}`,
    ],
  ];
  for (const [name, request] of cases) {
    it(`${name}: 400, the connection closed, the hidden request never answered`, async () => {
      const text = await exchange(request(smuggled()));
      expect(statusLines(text), text).toEqual([400]);
      expect(text).not.toContain("/anything/smuggled");
    });
  }

  it("a chunked body reaches the app whole, as one request", async () => {
    const text = await exchange(
      `POST /anything HTTP/1.1\r\n${head()}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n` +
        "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    );
    expect(statusLines(text), text).toEqual([200]);
    // go-httpbin echoes a body that is not JSON as a data URL
    expect(text).toContain(
      `"data": "data:application/octet-stream;base64,${Buffer.from("hello world").toString("base64")}"`,
    );
  });
});

describe("bodies the proxy does not read", () => {
  it("a request refused without a session closes its connection at once instead of waiting for its body", async () => {
    const host = kit.hostOf("httpbin");
    const s = connect({ host: "127.0.0.1", port: kit.port, servername: host, ca: kit.platform.hostCaPem });
    let got = "";
    s.setEncoding("utf8");
    s.on("data", (d: string) => {
      got += d;
    });
    await new Promise<void>((resolve, reject) => {
      s.once("secureConnect", () => resolve());
      s.once("error", reject);
    });
    // 1 MB announced, 5 bytes sent: the rest would take as long as this client wanted
    s.write(`POST /anything HTTP/1.1\r\nHost: ${host}:${kit.port}\r\nContent-Length: 1000000\r\n\r\nhello`);
    const closed = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 3_000);
      s.once("close", () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    s.destroy();
    expect(statusLines(got), got).toEqual([401]);
    expect(got.toLowerCase()).toContain("connection: close");
    expect(closed).toBe(true);
  });

  it("a bodiless request refused without a session keeps its connection (a page's many redirects)", async () => {
    const host = kit.hostOf("httpbin");
    const text = await exchange(
      `GET /a HTTP/1.1\r\nHost: ${host}:${kit.port}\r\n\r\nGET /b HTTP/1.1\r\nHost: ${host}:${kit.port}\r\nConnection: close\r\n\r\n`,
    );
    expect(statusLines(text), text).toEqual([302, 302]);
  });
});

describe("the proxy's /x-svc/ paths", () => {
  it("are the exact lower-case prefix: an encoded slash, another case or a doubled slash is the app's path", async () => {
    for (const path of ["/X-SVC/logout", "/x-svc%2Flogout", "//x-svc/logout"]) {
      const text = await exchange(
        `POST ${path} HTTP/1.1\r\n${head()}Content-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      // go-httpbin's own answer (its plain-text 404 or its path cleaning), never the proxy's logout
      expect(text, path).not.toMatch(/set-cookie: __Host-svc_app_session=;/i);
      expect(text, path).not.toContain("no such path on the app proxy");
      expect(text, path).not.toMatch(/^HTTP\/1\.1 303/m);
    }
    // the session is still there
    const still = await exchange(`GET /get HTTP/1.1\r\n${head()}Connection: close\r\n\r\n`);
    expect(statusLines(still)).toEqual([200]);
  });
});

describe("request targets that are not a path on the app", () => {
  it("CONNECT is not tunnelled anywhere", async () => {
    const text = await exchange(`CONNECT 127.0.0.1:${kit.httpbin.port} HTTP/1.1\r\n${head()}\r\n`);
    expect(
      statusLines(text).every((s) => s >= 400),
      text,
    ).toBe(true);
    expect(text).not.toMatch(/^HTTP\/1\.1 200/m);
  });

  it("an absolute-form target naming another host is refused (400), not proxied there", async () => {
    const text = await exchange(
      `GET http://127.0.0.1:${kit.httpbin.port}/anything HTTP/1.1\r\n${head()}Connection: close\r\n\r\n`,
    );
    expect(statusLines(text), text).toEqual([400]);
  });
});

describe("WebSockets from another origin", () => {
  /** The status a WebSocket to the httpbin app host gets, opened as a page of `origin` would. */
  const open = (origin?: string): Promise<number> =>
    new Promise((resolve) => {
      const ws = new WebSocket(`wss://127.0.0.1:${kit.port}/websocket/echo`, {
        ca: kit.platform.hostCaPem,
        servername: kit.hostOf("httpbin"),
        headers: { host: `${kit.hostOf("httpbin")}:${kit.port}`, cookie: `__Host-svc_app_session=${cookie}` },
        ...(origin ? { origin } : {}),
      } as WebSocket.ClientOptions);
      ws.once("unexpected-response", (_req, res) => {
        resolve(res.statusCode ?? 0);
        ws.terminate();
      });
      ws.once("open", () => {
        resolve(101);
        ws.terminate();
      });
      ws.once("error", () => resolve(-1));
    });

  it("refuses a socket another app's page (same site, other origin) opens with the user's cookie", async () => {
    expect(await open(kit.originOf("echo"))).toBe(403);
    expect(await open(`https://${PUBLIC_HOST}:${kit.port}`)).toBe(403);
    expect(await open("null")).toBe(403);
    // the app's own pages, and clients that send no Origin, open it
    expect(await open(kit.originOf("httpbin"))).toBe(101);
    expect(await open()).toBe(101);
  });
});
