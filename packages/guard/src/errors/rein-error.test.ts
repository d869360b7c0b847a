import { PostCompactionLoopPersistedError } from "../loops/post-compaction-loop-persisted-error";
import { ToolLoopError } from "../loops/tool-loop-error";
import { UnknownToolError } from "../loops/unknown-tool-error";
import { ChainDepthError, CycleError } from "./cycle-error";
import { RecursionError } from "./recursion-error";
import { GuardError, ModelBehaviorError, ReinError, SystemFailureError, UsageError } from "./rein-error";

type ErrorsModule = typeof import("./rein-error") & typeof import("./cycle-error") & typeof import("./recursion-error");

/** A second copy of the errors' module graph, as when two copies of @rein/guard are installed. */
function duplicateCopy(): ErrorsModule {
  let copy: ErrorsModule | undefined;
  jest.isolateModules(() => {
    // require (not import) so jest's isolated registry loads a fresh copy.
    copy = {
      ...(require("./rein-error") as typeof import("./rein-error")),
      ...(require("./cycle-error") as typeof import("./cycle-error")),
      ...(require("./recursion-error") as typeof import("./recursion-error")),
    };
  });
  return copy!;
}

/** What a minifier does to class names. */
function renameClass(errorClass: object, name: string): void {
  Object.defineProperty(errorClass, "name", { value: name });
}

describe("ReinError", () => {
  it("names every error after its class and keeps the cause", () => {
    const cause = new Error("root");
    const error = new ReinError("boom", { cause });
    expect(error.name).toBe("ReinError");
    expect(error.cause).toBe(cause);
    expect(new RecursionError("f", 6, 5).name).toBe("RecursionError");
    expect(new CycleError(["A", "B"], 3).name).toBe("CycleError");
    expect(new ChainDepthError("f", 26, 25).name).toBe("ChainDepthError");
    expect(new UsageError("x").name).toBe("UsageError");
    expect(new ModelBehaviorError("x").name).toBe("ModelBehaviorError");
    expect(new SystemFailureError("x").name).toBe("SystemFailureError");
    expect(new GuardError("x").name).toBe("GuardError");
    expect(new UnknownToolError("t", []).name).toBe("UnknownToolError");
    expect(new ToolLoopError("generic_repeat", 20, "t").name).toBe("ToolLoopError");
    expect(new PostCompactionLoopPersistedError("t", 3).name).toBe("PostCompactionLoopPersistedError");
    // An own property, as before, so serialising an error keeps its name.
    expect(JSON.parse(JSON.stringify(new CycleError(["A", "B"], 3)))).toMatchObject({ name: "CycleError", repeats: 3 });
    expect(String(new RecursionError("f", 6, 5))).toBe(
      "RecursionError: agentic function f exceeded max nesting depth 5 — possible runaway recursion",
    );
  });

  it("isInstance matches the class and its subclasses only", () => {
    const recursion = new RecursionError("f", 6, 5);
    expect(ReinError.isInstance(recursion)).toBe(true);
    expect(GuardError.isInstance(recursion)).toBe(true);
    expect(RecursionError.isInstance(recursion)).toBe(true);
    expect(CycleError.isInstance(recursion)).toBe(false);
    expect(ReinError.isInstance(new Error("x"))).toBe(false);
    expect(ReinError.isInstance("RecursionError")).toBe(false);
    expect(ReinError.isInstance(null)).toBe(false);
    expect(ReinError.isInstance({ name: "RecursionError", message: "m" })).toBe(false);
  });

  it("isInstance recognises errors from a duplicate copy of the package", () => {
    const copy = duplicateCopy();
    // A second copy of the module graph: `instanceof` fails across copies.
    const foreign = new copy.RecursionError("f", 6, 5);
    expect(foreign instanceof RecursionError).toBe(false);
    expect(RecursionError.isInstance(foreign)).toBe(true);
    expect(ReinError.isInstance(foreign)).toBe(true);
    expect(CycleError.isInstance(foreign)).toBe(false);
  });

  it("isInstance works both ways between duplicate copies, for classes, their ancestors and families", () => {
    const copy = duplicateCopy();
    expect(copy.RecursionError).not.toBe(RecursionError);
    const local = new CycleError(["A", "B"], 3);
    const foreign = new copy.CycleError(["A", "B"], 3);
    for (const [checks, error] of [
      [copy, local],
      [{ ReinError, GuardError, ModelBehaviorError, UsageError, SystemFailureError, CycleError, ChainDepthError, RecursionError }, foreign],
    ] as const) {
      expect(checks.CycleError.isInstance(error)).toBe(true);
      expect(checks.GuardError.isInstance(error)).toBe(true);
      expect(checks.ModelBehaviorError.isInstance(error)).toBe(true);
      expect(checks.ReinError.isInstance(error)).toBe(true);
      expect(checks.ChainDepthError.isInstance(error)).toBe(false);
      expect(checks.RecursionError.isInstance(error)).toBe(false);
      expect(checks.UsageError.isInstance(error)).toBe(false);
      expect(checks.SystemFailureError.isInstance(error)).toBe(false);
    }
    expect(foreign.name).toBe("CycleError");
  });

  it("minified class names (all 't') neither match each other nor leak into name", () => {
    // Regression: isInstance used to compare constructor names and name was new.target.name.
    const copy = duplicateCopy();
    for (const errorClass of [copy.ReinError, copy.GuardError, copy.RecursionError, copy.CycleError, copy.ChainDepthError]) {
      renameClass(errorClass, "t");
    }
    const recursion = new copy.RecursionError("f", 6, 5);
    const cycle = new copy.CycleError(["A", "B"], 3);
    expect(copy.RecursionError.name).toBe("t");
    expect(recursion.name).toBe("RecursionError");
    expect(cycle.name).toBe("CycleError");
    expect(copy.CycleError.isInstance(recursion)).toBe(false);
    expect(copy.RecursionError.isInstance(cycle)).toBe(false);
    expect(copy.ChainDepthError.isInstance(recursion)).toBe(false);
    // Against the unminified copy too: a foreign "t" is never mistaken for a local class.
    expect(CycleError.isInstance(recursion)).toBe(false);
    expect(RecursionError.isInstance(recursion)).toBe(true);
    expect(GuardError.isInstance(cycle)).toBe(true);
  });

  it("two unrelated subclasses both called 't' do not match each other", () => {
    // Regression for the old name comparison, with the classes a bundler would emit.
    const first = (() => {
      const t = class extends ModelBehaviorError {
        static {
          this.defineErrorName("TestFirstError");
        }
      };
      return t;
    })();
    const second = (() => {
      const t = class extends ModelBehaviorError {
        static {
          this.defineErrorName("TestSecondError");
        }
      };
      return t;
    })();
    expect(first.name).toBe("t");
    expect(second.name).toBe("t");
    expect(first.isInstance(new second("x"))).toBe(false);
    expect(second.isInstance(new first("x"))).toBe(false);
    expect(first.isInstance(new first("x"))).toBe(true);
    expect(ModelBehaviorError.isInstance(new second("x"))).toBe(true);
    expect(new first("x").name).toBe("TestFirstError");
    expect(new second("x").name).toBe("TestSecondError");
  });

  it("a subclass that declares no name inherits its parent's name, and its isInstance is instanceof", () => {
    const t = class extends UsageError {};
    const u = class extends UsageError {};
    const error = new t("x");
    expect(error.name).toBe("UsageError");
    expect(t.isInstance(error)).toBe(true);
    expect(u.isInstance(error)).toBe(false);
    expect(UsageError.isInstance(error)).toBe(true);
    expect(t.isInstance(new UsageError("x"))).toBe(false);
  });

  it("sorts the guard package's errors into families by whose fault it is", () => {
    const modelBehavior = [
      new GuardError("x"),
      new RecursionError("f", 6, 5),
      new CycleError(["A", "B"], 3),
      new ChainDepthError("f", 26, 25),
      new ToolLoopError("generic_repeat", 20, "t"),
      new PostCompactionLoopPersistedError("t", 3),
      new UnknownToolError("t", []),
    ];
    for (const error of modelBehavior) {
      expect([error.name, ModelBehaviorError.isInstance(error)]).toEqual([error.name, true]);
      expect([error.name, UsageError.isInstance(error), SystemFailureError.isInstance(error)]).toEqual([error.name, false, false]);
    }
    expect(UsageError.isInstance(new UsageError("x"))).toBe(true);
    expect(SystemFailureError.isInstance(new SystemFailureError("x"))).toBe(true);
    expect(ModelBehaviorError.isInstance(new UsageError("x"))).toBe(false);
  });

  it("UnknownToolError is model behaviour but not a GuardError refusal", () => {
    const error = new UnknownToolError("web_search", ["search"]);
    expect(GuardError.isInstance(error)).toBe(false);
    expect(error instanceof GuardError).toBe(false);
    expect(ModelBehaviorError.isInstance(error)).toBe(true);
    expect(error.toolName).toBe("web_search");
  });
});
