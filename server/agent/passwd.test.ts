// cachedPasswd: found users are remembered for the TTL, concurrent asks share one lookup, and
// unknown users and failed lookups are asked again every time. The last case uses the real getent.
import { describe, expect, it } from "vitest";
import { cachedPasswd, getentPasswd, type PasswdEntry, type PasswdLookup } from "./passwd.ts";

const alice: PasswdEntry = { name: "alice", uid: 1000, gid: 1000, home: "/home/alice", shell: "/bin/sh" };

function counting(answer: (login: string) => Promise<PasswdEntry | undefined>) {
  const asked: string[] = [];
  const lookup: PasswdLookup = (login) => {
    asked.push(login);
    return answer(login);
  };
  return { lookup, asked };
}

describe("cachedPasswd", () => {
  it("remembers a found user until the TTL, then asks again", async () => {
    let t = 0;
    const { lookup, asked } = counting(async (l) => (l === "alice" ? alice : undefined));
    const cached = cachedPasswd(lookup, 1000, () => t);
    expect(await cached("alice")).toEqual(alice);
    t = 999;
    expect(await cached("alice")).toEqual(alice);
    expect(asked).toEqual(["alice"]);
    t = 1000;
    expect(await cached("alice")).toEqual(alice);
    expect(asked).toEqual(["alice", "alice"]);
  });

  it("shares one lookup between concurrent asks", async () => {
    let release: (e: PasswdEntry) => void = () => {};
    const { lookup, asked } = counting(() => new Promise((r) => (release = r)));
    const cached = cachedPasswd(lookup);
    const both = Promise.all([cached("alice"), cached("alice")]);
    release(alice);
    expect(await both).toEqual([alice, alice]);
    expect(asked).toEqual(["alice"]);
  });

  it("asks again for an unknown user and after a failed lookup", async () => {
    let fail = true;
    const { lookup, asked } = counting(async (l) => {
      if (fail) throw new Error("nss down");
      return l === "alice" ? alice : undefined;
    });
    const cached = cachedPasswd(lookup);
    await expect(cached("alice")).rejects.toThrow("nss down");
    fail = false;
    expect(await cached("alice")).toEqual(alice);
    expect(await cached("ghost")).toBeUndefined();
    expect(await cached("ghost")).toBeUndefined();
    expect(asked).toEqual(["alice", "alice", "ghost", "ghost"]);
  });

  it("gives the same entry as getent for root", async () => {
    const cached = cachedPasswd(getentPasswd);
    const first = await cached("root");
    expect(first?.uid).toBe(0);
    expect(await cached("root")).toEqual(await getentPasswd("root"));
  });
});
