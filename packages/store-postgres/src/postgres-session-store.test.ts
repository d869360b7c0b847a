import { describeSessionStoreContract } from "../../core/src/session/session-store-contract";
import { PostgresSessionStore } from "./postgres-session-store";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";

let server: EmbeddedPostgresServer | undefined;
beforeAll(async () => {
  server = await startEmbeddedPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

describeSessionStoreContract("PostgresSessionStore", () => new PostgresSessionStore({ connectionString: server!.connectionString, schema: freshSchemaName(), shutdownFlush: false }));
