import { describe, expect, it } from "vitest";
import { mapEntryName } from "./reflection.ts";

describe("mapEntryName", () => {
  it("follows protoc's naming of implicit map entries", () => {
    expect(mapEntryName("labels")).toBe("LabelsEntry");
    expect(mapEntryName("node_labels")).toBe("NodeLabelsEntry");
    expect(mapEntryName("x509_svid_map")).toBe("X509SvidMapEntry");
  });
});
