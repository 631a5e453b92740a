import { describe, expect, it } from "vitest";
import { UnavailableError } from "../errors.ts";
import { parseGetCallerIdentityResponse, parseStsErrorCode } from "./sts-xml.ts";

const ok = (result: string, prolog = "") =>
  `${prolog}<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <GetCallerIdentityResult>${result}</GetCallerIdentityResult>
  <ResponseMetadata><RequestId>0b4f8a4e-0000-4000-8000-000000000000</RequestId></ResponseMetadata>
</GetCallerIdentityResponse>`;
const FIELDS =
  "\n    <Arn>arn:aws:sts::123456789012:assumed-role/node-role/i-1</Arn>\n    <UserId>AROAEXAMPLE:i-1</UserId>\n    <Account>123456789012</Account>\n  ";

describe("GetCallerIdentityResponse reader", () => {
  it("reads the three fields, with or without an XML declaration", () => {
    for (const prolog of ["", '<?xml version="1.0" encoding="UTF-8"?>\n']) {
      expect(parseGetCallerIdentityResponse(ok(FIELDS, prolog))).toEqual({
        account: "123456789012",
        arn: "arn:aws:sts::123456789012:assumed-role/node-role/i-1",
        userId: "AROAEXAMPLE:i-1",
      });
    }
  });

  it("decodes predefined entities and character references", () => {
    const id = parseGetCallerIdentityResponse(
      ok(FIELDS.replace("node-role/i-1<", "node-role/a&amp;b&#x2C;c&#61;d<")),
    );
    expect(id.arn).toBe("arn:aws:sts::123456789012:assumed-role/node-role/a&b,c=d");
  });

  it.each([
    ["a DOCTYPE", `<!DOCTYPE x [<!ENTITY e "arn">]>${ok(FIELDS)}`],
    ["CDATA", ok(FIELDS.replace("AROAEXAMPLE:i-1", "<![CDATA[AROA]]>"))],
    ["a comment", ok(`<!-- hi -->${FIELDS}`)],
    ["an unknown entity", ok(FIELDS.replace("i-1</Arn>", "&e;</Arn>"))],
    ["a bare ampersand", ok(FIELDS.replace("i-1</Arn>", "a&b</Arn>"))],
    ["a repeated field", ok(`${FIELDS}<Account>123456789012</Account>`)],
    ["a missing field", ok(FIELDS.replace(/<UserId>.*<\/UserId>/, ""))],
    ["a nested element in the result", ok(`${FIELDS}<X><Y>1</Y></X>`)],
    [
      "two results",
      ok(FIELDS).replace(
        "</GetCallerIdentityResponse>",
        `<GetCallerIdentityResult>${FIELDS}</GetCallerIdentityResult></GetCallerIdentityResponse>`,
      ),
    ],
    ["an ARN of another account", ok(FIELDS.replace("sts::123456789012:", "sts::210987654321:"))],
    ["a short account", ok(FIELDS.replace("<Account>123456789012", "<Account>12345"))],
    ["something that is not an ARN", ok(FIELDS.replace("arn:aws:sts::", "urn:aws:sts::"))],
    ["another root element", "<AssumeRoleResponse></AssumeRoleResponse>"],
    ["JSON", '{"GetCallerIdentityResponse":{}}'],
    ["trailing content", `${ok(FIELDS)}<x/>`],
  ])("refuses %s", (_why, xml) => {
    expect(() => parseGetCallerIdentityResponse(xml)).toThrow(UnavailableError);
  });
});

describe("STS ErrorResponse reader", () => {
  it("reads the code and ignores everything else", () => {
    const xml = `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error><Type>Sender</Type><Code>SignatureDoesNotMatch</Code><Message>m</Message></Error>
  <RequestId>r</RequestId></ErrorResponse>`;
    expect(parseStsErrorCode(xml)).toBe("SignatureDoesNotMatch");
    expect(parseStsErrorCode(xml.replace("SignatureDoesNotMatch", "<b>x</b>"))).toBeUndefined();
    expect(parseStsErrorCode("not xml")).toBeUndefined();
  });
});
