/** Which origins `reachFetch` may send a caller's budget to (the allow list; `reachFetch` itself is tested in core's reach-fetch-origins.test.ts). */
import { mayReceiveBudget, reachOrigins, setReachOrigins } from "./reach-origins";
import { withCleanReachOrigins } from "./__fixtures__/clean-reach-origins";

withCleanReachOrigins();

describe("which origins receive the budget header", () => {
  it("without a list: loopback only (localhost, 127.0.0.0/8, [::1], any port, http or https)", () => {
    expect(reachOrigins()).toBe("loopback");
    for (const url of ["http://127.0.0.1:8787/v1/agent/run", "https://localhost/x", "http://[::1]:1/", "http://127.9.9.9/"]) expect([url, mayReceiveBudget(url)]).toEqual([url, true]);
    for (const url of ["https://evil.example/steal", "http://10.0.0.5/", "http://localhost.evil.example/", "ftp://127.0.0.1/", "not a url", "/relative"]) expect([url, mayReceiveBudget(url)]).toEqual([url, false]);
  });

  it("REIN_REACH_ORIGINS (comma-separated origins) replaces the default: scheme, host and port must match", () => {
    process.env.REIN_REACH_ORIGINS = "https://agents.internal:8443, http://peer.internal";
    expect(reachOrigins()).toEqual(["https://agents.internal:8443", "http://peer.internal"]);
    expect(mayReceiveBudget("https://agents.internal:8443/v1/agent/run")).toBe(true);
    expect(mayReceiveBudget("http://peer.internal:80/x")).toBe(true);
    expect(mayReceiveBudget("http://agents.internal:8443/")).toBe(false);
    expect(mayReceiveBudget("https://agents.internal/")).toBe(false);
    expect(mayReceiveBudget("http://127.0.0.1/")).toBe(false);
  });

  it("setReachOrigins wins over the variable; undefined goes back to it; anything but an origin is a TypeError", () => {
    process.env.REIN_REACH_ORIGINS = "https://a.internal";
    setReachOrigins(["https://b.internal/"]);
    expect(reachOrigins()).toEqual(["https://b.internal"]);
    setReachOrigins(undefined);
    expect(reachOrigins()).toEqual(["https://a.internal"]);
    expect(() => setReachOrigins(["https://b.internal/path"])).toThrow(/is not an origin/);
    expect(() => setReachOrigins(["b.internal"])).toThrow(/is not an origin/);
    expect(() => setReachOrigins("https://b.internal" as never)).toThrow(TypeError);
    process.env.REIN_REACH_ORIGINS = "*";
    expect(() => reachOrigins()).toThrow(/REIN_REACH_ORIGINS: '\*' is not an origin/);
  });
});
