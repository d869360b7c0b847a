import { ChainDepthError, CycleError } from "./cycle-error";
import { RecursionError } from "./recursion-error";
import { GuardError, ReinError } from "./rein-error";

describe("ReinError", () => {
  it("names every error after its class and keeps the cause", () => {
    const cause = new Error("root");
    const error = new ReinError("boom", { cause });
    expect(error.name).toBe("ReinError");
    expect(error.cause).toBe(cause);
    expect(new RecursionError("f", 6, 5).name).toBe("RecursionError");
    expect(new CycleError(["A", "B"], 3).name).toBe("CycleError");
    expect(new ChainDepthError("f", 26, 25).name).toBe("ChainDepthError");
  });

  it("isInstance matches the class and its subclasses only", () => {
    const recursion = new RecursionError("f", 6, 5);
    expect(ReinError.isInstance(recursion)).toBe(true);
    expect(GuardError.isInstance(recursion)).toBe(true);
    expect(RecursionError.isInstance(recursion)).toBe(true);
    expect(CycleError.isInstance(recursion)).toBe(false);
    expect(ReinError.isInstance(new Error("x"))).toBe(false);
    expect(ReinError.isInstance("RecursionError")).toBe(false);
  });

  it("isInstance recognises errors from a duplicate copy of the package", () => {
    jest.isolateModules(() => {
      // A second copy of the module graph: `instanceof` fails across copies.
      const copy = require("./recursion-error") as typeof import("./recursion-error");
      const foreign = new copy.RecursionError("f", 6, 5);
      expect(foreign instanceof RecursionError).toBe(false);
      expect(RecursionError.isInstance(foreign)).toBe(true);
      expect(ReinError.isInstance(foreign)).toBe(true);
      expect(CycleError.isInstance(foreign)).toBe(false);
    });
  });
});
