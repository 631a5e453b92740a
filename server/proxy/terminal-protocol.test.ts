import { describe, expect, it } from "vitest";
import { AccessDeniedError, NotFoundError, SvcError, UnavailableError } from "../../core/errors.ts";
import { closeCodeOf, errorControl, parseClientControl } from "./terminal-protocol.ts";
import { requireReachable, splitAddress } from "./terminal-route.ts";

describe("terminal framing", () => {
  it("parses resize and close", () => {
    expect(parseClientControl('{"type":"resize","cols":120,"rows":40}')).toEqual({
      type: "resize",
      cols: 120,
      rows: 40,
    });
    expect(parseClientControl(Buffer.from('{"type":"close"}'))).toEqual({ type: "close" });
  });

  it("refuses anything else as bad_parameter", () => {
    for (const bad of [
      "not json",
      "[]",
      "null",
      '{"type":"resize","cols":0,"rows":10}',
      '{"type":"resize","cols":10.5,"rows":10}',
      '{"type":"resize","cols":1001,"rows":10}',
      '{"type":"resize","cols":"80","rows":24}',
      '{"type":"exec","command":"id"}',
      `{"type":"close","pad":"${"x".repeat(2000)}"}`,
    ]) {
      expect(() => parseClientControl(bad), bad.slice(0, 40)).toThrow(
        expect.objectContaining({ code: "bad_parameter" }),
      );
    }
  });

  it("maps typed errors to frames and 4xxx close codes, hiding internals", () => {
    expect(errorControl(new NotFoundError("unknown node"))).toEqual({
      type: "error",
      code: "not_found",
      message: "unknown node",
    });
    expect(errorControl(new Error("secret path /etc/x"))).toEqual({
      type: "error",
      code: "internal",
      message: "internal error",
    });
    expect(errorControl(new SvcError("internal", "db password wrong"))).toEqual({
      type: "error",
      code: "internal",
      message: "internal error",
    });
    expect(closeCodeOf("not_found")).toBe(4404);
    expect(closeCodeOf(new AccessDeniedError("x").code)).toBe(4403);
    expect(closeCodeOf(new UnavailableError("x").code)).toBe(4503);
  });
});

describe("node addressing", () => {
  it("splits host:port and [v6]:port", () => {
    expect(splitAddress("127.0.0.1:3022")).toEqual({ host: "127.0.0.1", port: 3022 });
    expect(splitAddress("[::1]:22")).toEqual({ host: "::1", port: 22 });
    for (const bad of ["127.0.0.1", "host:0", "host:70000", ":22", "::1:22"]) {
      expect(() => splitAddress(bad), bad).toThrow(UnavailableError);
    }
  });

  it("needs an online node; an address is the dialer's question (a tunnel node has none)", () => {
    const node = { id: "n", hostname: "h", addresses: ["h:22"], labels: {}, status: "online", version: "" };
    expect(requireReachable(node)).toBe(node);
    expect(() => requireReachable({ ...node, status: "offline" })).toThrow(/is offline/);
    const tunnelOnly = { ...node, addresses: [] };
    expect(requireReachable(tunnelOnly)).toBe(tunnelOnly);
  });
});
