// checkAuditInput is what both backends refuse an audit event with before storage: each refusal
// below is a BadParameterError naming the problem; a good event comes back with its JSON text.
import { describe, expect, it } from "vitest";
import { ManualClock } from "../clock.ts";
import { BadParameterError } from "../errors.ts";
import type { AuditEventInput } from "./backend.ts";
import { checkAuditInput } from "./validate.ts";

const clock = new ManualClock(1_700_000_000_000);
const good = { event_type: "cert.create", user_name: "bob", success: true, fields: { a: [1, "x"] } };

describe("checkAuditInput", () => {
  it("returns the checked event with its fields as JSON text and the clock's time", () => {
    expect(checkAuditInput(good, clock)).toEqual({
      time: 1_700_000_000_000,
      event_type: "cert.create",
      user_name: "bob",
      success: true,
      fields: good.fields,
      fieldsText: '{"a":[1,"x"]}',
    });
    const at = new Date(5);
    expect(checkAuditInput({ event_type: "e", user_name: "", time: at }, clock)).toMatchObject({
      time: 5,
      success: null,
      fieldsText: "{}",
    });
  });

  const bad: [string, unknown, RegExp][] = [
    ["not an object", null, /must be an object/],
    ["empty type", { ...good, event_type: "" }, /event_type/],
    ["long type", { ...good, event_type: "e".repeat(257) }, /event_type/],
    ["long user", { ...good, user_name: "u".repeat(257) }, /user_name/],
    ["user not a string", { ...good, user_name: 7 }, /user_name/],
    ["success not a boolean", { ...good, success: "yes" }, /success/],
    ["fields an array", { ...good, fields: [] }, /fields must be an object/],
    ["bad time", { ...good, time: new Date(Number.NaN) }, /time/],
    ["NUL in the type", { ...good, event_type: "cert\u0000create" }, /plain text/],
    ["NUL in the user", { ...good, user_name: "b\u0000ob" }, /plain text/],
    ["lone surrogate in the type", { ...good, event_type: "cert\ud800" }, /plain text/],
    ["lone surrogate in the user", { ...good, user_name: "\udc00bob" }, /plain text/],
    ["fields not JSON", { ...good, fields: { n: 1n } }, /not serializable/],
  ];
  for (const [name, event, message] of bad) {
    it(`refuses ${name}`, () => {
      const f = () => checkAuditInput(event as AuditEventInput, clock);
      expect(f).toThrow(BadParameterError);
      expect(f).toThrow(message);
    });
  }
});
