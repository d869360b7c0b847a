import { Context } from "../context/context";
import { ScriptedProvider } from "../model/scripted-provider";
import { InMemorySessionStore } from "@rein/session";
import { Chat } from "../session/__fixtures__/chat-agent";
import { Runtime } from "./runtime";

describe("ModelRequest.cacheKey", () => {
  it("every request of a recorded conversation carries its session id (providers route them to one prompt cache); unrecorded runs carry none", async () => {
    const model = new ScriptedProvider(["one", "two", "three"]);
    const store = new InMemorySessionStore();
    const chat = new Chat({ runtime: new Runtime({ provider: model }), context: Context.forSession(store, "conversation-7") });
    await chat.say("first");
    await chat.say("second");
    await new Chat({ runtime: new Runtime({ provider: model }) }).say("unrecorded");
    expect(model.requests.map((request) => request.cacheKey)).toEqual(["conversation-7", "conversation-7", undefined]);
  });
});
