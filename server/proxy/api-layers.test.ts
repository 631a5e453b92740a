// The layers in front of the proxy's AuthApi: a layer answers its own methods (and a symbol naming
// it), hands every other read to the layer below with `this` bound to it, and a forwarding handle
// reads whichever client is current at each call.
import { describe, expect, it } from "vitest";
import { forwarding, layered } from "./api-layers.ts";

class Client {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
  whoAmI(): string {
    return this.name;
  }
  greet(who: string): string {
    return `${this.name} greets ${who}`;
  }
}

describe("api layers", () => {
  it("a layer answers its own methods and symbol; other reads reach the layer below, bound to it", () => {
    const mark = Symbol("layer");
    const below = new Client("below");
    const layer = layered(below, { greet: (who: string) => `layer greets ${who}`, [mark]: "me" });
    expect(layer.greet("alice")).toBe("layer greets alice");
    expect(layer.whoAmI()).toBe("below");
    expect(layer.name).toBe("below");
    expect((layer as unknown as Record<symbol, unknown>)[mark]).toBe("me");
    // A detached method keeps its receiver: routes pass them around.
    const { whoAmI } = layer;
    expect(whoAmI()).toBe("below");
  });

  it("a forwarding handle follows the current client, also below a layer", () => {
    let current = new Client("first");
    const handle = forwarding(() => current);
    const layer = layered(handle, { greet: (who: string) => `cached ${who}` });
    expect(layer.whoAmI()).toBe("first");
    current = new Client("second");
    expect(layer.whoAmI()).toBe("second");
    expect(handle.greet("bob")).toBe("second greets bob");
    expect(layer.greet("bob")).toBe("cached bob");
  });
});
